/**
 * The command-line parser's usage failures, said for a person: an unknown flag with the flag it probably meant
 * (edit distance over the command's own flags), why a token is never a flag, and a missing
 * file named as such. Pure: cli.ts hands over the parser's message, the argv and the command's flags.
 */
import { editDistance } from '../infra/did-you-mean.js';

/** The command being parsed when parsing failed, and its flags (kebab-case, as typed). */
export interface CommandFlags {
  command: string;
  flags: readonly string[];
}

/** Said instead of a did-you-mean: a secret on the command line shows in `ps` and shell history. */
export const TOKEN_HINT = 'tokens are not flags (they would show in `ps`): set CCS_TOKEN or --token-file';

const SERVICE_COMMANDS = ['import', 'validate', 'export', 'check'];
const IMPORT_OUT = 'import writes --results FILE (one line per row) and --failed FILE (the rows to fix)';

/** Flags people reach for that a command spells otherwise, or does not have. */
function knownMistake(command: string, flag: string): string | undefined {
  const name = flag.toLowerCase().replace(/_/g, '-');
  if (SERVICE_COMMANDS.includes(command) && ['token', 'api-token', 'api-key', 'ccs-token'].includes(name)) return TOKEN_HINT;
  if ((command === 'import' || command === 'validate') && ['out', 'output', 'o'].includes(name)) return IMPORT_OUT;
  return undefined;
}

export { editDistance };

/** Case, hyphens and underscores do not count: `--dryrun`, `--dry_run`, `--dryRun` mean `--dry-run`. */
const squash = (name: string) => name.toLowerCase().replace(/[-_]/g, '');

/**
 * The flags `typed` most probably meant: the closest by edit distance (1 for short names, 2
 * otherwise), else one the typed name extends (`--failed-file` → `--failed`, `--output` → `--out`).
 */
export function closestFlags(typed: string, flags: readonly string[]): string[] {
  const word = squash(typed);
  if (word.length < 2) return [];
  const limit = word.length <= 4 ? 1 : 2;
  const scored = flags.map((flag) => {
    const candidate = squash(flag);
    const distance = editDistance(word, candidate);
    if (distance <= limit) return { flag, score: distance };
    const extends_ = candidate.length >= 3 && word.startsWith(candidate);
    const truncated = word.length >= 4 && candidate.startsWith(word);
    return { flag, score: extends_ || truncated ? limit + 1 : Infinity };
  });
  const best = Math.min(...scored.map((entry) => entry.score));
  if (best === Infinity) return [];
  return scored.filter((entry) => entry.score === best).map((entry) => entry.flag).slice(0, 3);
}

/** The names the parser reports, once each, as the user typed them (it adds a camelCase twin). */
function typedNames(reported: readonly string[], argv: readonly string[]): { name: string; flag: boolean }[] {
  const typed: string[] = [];
  for (const arg of argv) {
    if (arg === '--') break;
    const match = /^--(?:no-)?([^=]+)/.exec(arg);
    if (match) typed.push(match[1]!, arg.slice(2).split('=')[0]!);
  }
  const seen = new Set<string>();
  const names: { name: string; flag: boolean }[] = [];
  for (const name of reported) {
    const spelled = typed.find((word) => squash(word) === squash(name));
    const short = name.length === 1 && argv.some((arg) => /^-[^-]/.test(arg) && arg.includes(name));
    const flag = spelled !== undefined || short;
    const key = flag ? squash(name) : name;
    if (seen.has(key)) continue;
    seen.add(key);
    names.push({ name: spelled ?? name, flag });
  }
  return names;
}

function unknownFlag(name: string, known: CommandFlags | undefined): string {
  const dashes = name.length === 1 ? '-' : '--';
  const where = known === undefined ? '' : ` for ${known.command}`;
  const mistake = known === undefined ? undefined : knownMistake(known.command, name);
  if (mistake !== undefined) return `unknown flag ${dashes}${name}${where}: ${mistake}`;
  const close = closestFlags(name, known?.flags ?? []);
  const hint = close.length === 0 ? '' : `: did you mean ${close.map((flag) => `--${flag}`).join(' or ')}?`;
  return `unknown flag ${dashes}${name}${where}${hint}`;
}

function unexpected(name: string, known: CommandFlags | undefined): string {
  if (known === undefined) return `unexpected argument "${name}"`;
  const one = known.command === 'import' || known.command === 'validate' ? ` (one file per run: ccs-bulk ${known.command} <file>)` : '';
  return `unexpected argument "${name}" for ${known.command}${one}`;
}

/** Usage lines for a missing positional, by command. */
const MISSING: Record<string, string> = {
  import: 'missing FILE: ccs-bulk import <file>',
  validate: 'missing FILE: ccs-bulk validate <file>',
  'results merge': 'missing FILES: ccs-bulk results merge <files..> --out FILE',
};

/** The parser's failure message → the one ccs-bulk prints (unchanged when there is nothing to add). */
export function explainUsage(message: string, argv: readonly string[], known: CommandFlags | undefined): string {
  if (/^Not enough non-option arguments/.test(message) && known !== undefined && MISSING[known.command] !== undefined) {
    return MISSING[known.command]!;
  }
  const unknown = /^Unknown arguments?: (.*)$/s.exec(message);
  if (unknown === null) return message;
  const reported = unknown[1]!.split(', ').map((name) => name.trim()).filter((name) => name !== '');
  const parts = typedNames(reported, argv).map(({ name, flag }) =>
    flag ? unknownFlag(name, known) : unexpected(name, known),
  );
  return parts.length === 0 ? message : parts.join('; ');
}
