/** The command line that continues a stopped import: printed by the summary and by main's guard. */
import { printable } from '../infra/printable.js';
import { redactArg } from '../infra/redact.js';

/**
 * The command as typed, with --resume instead of --overwrite. Credentials are never repeated:
 * a `--proxy` URL's password shows as `[redacted]` (CCS_PROXY, not on the line, keeps it).
 */
export function resumeCommand(commandLine: readonly string[]): string {
  const args = commandLine.filter((arg) => arg !== '--overwrite' && arg !== '--resume');
  return ['ccs-bulk', ...args.map(redactArg), '--resume'].map(shellQuote).join(' ');
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
