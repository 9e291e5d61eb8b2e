/** The command line that continues a stopped import: printed by the summary and by main's guard. */
import { printable } from '../infra/printable.js';
import { redactArg } from '../infra/redact.js';
import type { Shard } from '../import/send/shard.js';

/**
 * The command as typed, with --resume instead of --overwrite. Credentials are never repeated:
 * a `--proxy` URL's password shows as `[redacted]` (CCS_PROXY, not on the line, keeps it).
 * A shard's run names its shard as `--shard K/N`: `--shards N` needs the Job's
 * JOB_COMPLETION_INDEX, and CCS_SHARD is not on the line, so neither works where it is read.
 */
export function resumeCommand(commandLine: readonly string[], shard?: Shard): string {
  let args = commandLine.filter((arg) => arg !== '--overwrite' && arg !== '--resume');
  if (shard !== undefined) args = [...withoutShardFlags(args), '--shard', `${shard.index}/${shard.count}`];
  return ['ccs-bulk', ...args.map(redactArg), '--resume'].map(shellQuote).join(' ');
}

/** The words without `--shard X`, `--shards N` (or their `=` forms). */
function withoutShardFlags(args: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--shard' || arg === '--shards') i++;
    else if (!arg.startsWith('--shard=') && !arg.startsWith('--shards=')) kept.push(arg);
  }
  return kept;
}

/**
 * Single-quotes a word for a POSIX shell unless it is plainly safe. A word holding a control
 * character or a bidirectional override is written `$'…'` with that character as `\xHH` bytes:
 * printed raw, it would act on the terminal (or turn the line around) instead of showing.
 */
export function shellQuote(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  if (printable(arg) === arg) return `'${arg.replace(/'/g, `'\\''`)}'`;
  let quoted = '';
  for (const char of arg) {
    if (char === '\\' || char === "'") quoted += `\\${char}`;
    else if (printable(char) === char) quoted += char;
    else quoted += [...Buffer.from(char, 'utf8')].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('');
  }
  return `$'${quoted}'`;
}
