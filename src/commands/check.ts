/**
 * `ccs-bulk check`: the preflight before a migration. One line per check (ok, warning, failed,
 * skipped) with the fix under each one that did not hold; exit 0 when all hold (warnings
 * allowed), 1 otherwise; --json prints the report for scripts.
 */
import { runChecks } from '../check/run-check.js';
import type { CheckLine, CheckReport } from '../check/types.js';
import type { ExitCode } from '../errors.js';
import type { Io } from '../infra/io.js';
import type { ResolvedCheckOptions } from '../check/options.js';

export async function runCheck(options: ResolvedCheckOptions, io: Io): Promise<ExitCode> {
  const report = await runChecks(options);
  if (options.json) io.stdout.write(`${JSON.stringify(report)}\n`);
  else io.stdout.write(formatReport(report));
  return report.ok ? 0 : 1;
}

const MARK: Record<CheckLine['status'], string> = { ok: 'ok', warning: 'warning', failed: 'FAILED', skipped: 'skipped' };

export function formatReport(report: CheckReport): string {
  const width = Math.max(...report.checks.map((line) => line.name.length));
  const lines = [`ccs-bulk check: ${report.baseUrl}`];
  for (const line of report.checks) {
    lines.push(`  ${MARK[line.status].padEnd(8)} ${line.name.padEnd(width)}  ${line.detail}`);
    if (line.fix) lines.push(`  ${''.padEnd(8)} ${''.padEnd(width)}  fix: ${line.fix}`);
  }
  const failed = report.checks.filter((line) => line.status === 'failed').length;
  const warnings = report.checks.filter((line) => line.status === 'warning').length;
  lines.push(
    report.ok
      ? `All checks hold${warnings > 0 ? ` (${warnings} warning${warnings > 1 ? 's' : ''})` : ''}: ready to import.`
      : `${failed} check${failed === 1 ? '' : 's'} failed: fix ${failed === 1 ? 'it' : 'them'} and run ccs-bulk check again.`,
  );
  return `${lines.join('\n')}\n`;
}
