/** The command line that continues a stopped import: printed by the summary and by main's guard. */

/** The command as typed, with --resume instead of --overwrite. */
export function resumeCommand(commandLine: readonly string[]): string {
  const args = commandLine.filter((arg) => arg !== '--overwrite' && arg !== '--resume');
  return ['ccs-bulk', ...args, '--resume'].map(shellQuote).join(' ');
}

/** Single-quotes a word for a POSIX shell unless it is plainly safe. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
