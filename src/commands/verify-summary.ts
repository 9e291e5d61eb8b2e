/**
 * verify's summary: for a person on stderr (the verdict, the counts by kind, the first problems
 * with file:row and field, the evidence's checksum), and as JSON on stdout (--json).
 */
import { basename } from 'node:path';
import { printable } from '../infra/printable.js';
import { placeOf, type Problem, PROBLEM_KINDS } from '../verify/problems.js';
import { countsJson, serviceJson, sourcesJson, verdictOf, type VerifyReport } from '../verify/report.js';

/** Problems shown on stderr; --json carries more, the evidence file all. */
const SHOWN = 10;
const IN_JSON = 100;

export function formatVerifySummary(report: VerifyReport): string {
  const { counts } = report;
  const lines: string[] = [];
  const accounted = Object.entries(counts.accounted).filter(([, n]) => n > 0);
  const accountedTotal = accounted.reduce((sum, [, n]) => sum + n, 0);
  const accountedText = accountedTotal === 0 ? 'none accounted for' : `${accountedTotal} accounted for (${accounted.map(([outcome, n]) => `${n} ${outcome}`).join(', ')})`;
  const rows = `${counts.rows} row${counts.rows === 1 ? '' : 's'} of ${report.sources.length} source${report.sources.length === 1 ? '' : 's'}`;
  if (report.proven) {
    lines.push(`ccs-bulk verify: PROVEN: ${rows}: ${counts.proven} on the service once with equal fields, ${accountedText}; no other client among the ${counts.clientsListed} listed`);
  } else {
    const kinds = PROBLEM_KINDS.filter((kind) => counts.problems[kind] > 0).map((kind) => `${counts.problems[kind]} ${kind}`);
    lines.push(`ccs-bulk verify: NOT PROVEN: ${counts.problemsTotal} problem${counts.problemsTotal === 1 ? '' : 's'} (${kinds.join(', ')})`);
    lines.push(`  ${rows}: ${counts.proven} on the service once with equal fields, ${accountedText}, ${counts.rowsWithProblems} with problems`);
  }
  const { listing } = report;
  const window = listing.createdFrom === null ? `created up to ${listing.createdTo}` : `created ${listing.createdFrom} to ${listing.createdTo}`;
  lines.push(`  service: ${report.service}, ${listing.clients} client${listing.clients === 1 ? '' : 's'} listed (${window})`);
  if (counts.bodiesChecked + counts.bodiesUnrecorded > 0) {
    const unrecorded = counts.bodiesUnrecorded === 0 ? '' : `; ${counts.bodiesUnrecorded} created row(s) with no body hash in a trail (imported before trails were kept)`;
    lines.push(`  bodies: ${counts.bodiesChecked} created row(s) rebuilt and compared with the SHA-256 of the body sent (the results file's .trail.csv)${unrecorded}`);
  }
  for (const problem of report.firstProblems.slice(0, SHOWN)) lines.push(`  ${problemLine(problem)}`);
  const more = counts.problemsTotal - Math.min(SHOWN, report.firstProblems.length);
  if (more > 0) lines.push(`  … and ${more} more${report.evidence ? ' in the evidence file' : ' (--evidence FILE lists them all)'}`);
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (report.evidence) {
    const { json, sha256, checksum, summary } = report.evidence;
    lines.push(`evidence: ${json} (SHA-256 ${sha256}), summary ${summary}; check with: sha256sum -c ${basename(checksum)} (in its folder)`);
  }
  return lines.map(printable).join('\n') + '\n';
}

/** `changed      clients.csv:4 (line 5) address: …` */
function problemLine(problem: Problem): string {
  const place = placeOf(problem);
  const field = problem.field === undefined ? '' : ` ${problem.field}`;
  const where = place === '' && field === '' ? '' : `${place}${field}: `;
  return `${problem.kind.padEnd(11)} ${where}${problem.message}`;
}

/** --json: the verdict, the counts, the files, the first problems, and the evidence written. */
export function verifyJson(report: VerifyReport): Record<string, unknown> {
  return {
    verdict: verdictOf(report),
    counts: countsJson(report.counts),
    service: serviceJson(report),
    sources: sourcesJson(report),
    results_files: report.results.map((file) => ({ path: file.path, source: file.source, sha256: file.sha256 ?? null, lines: file.lines })),
    notes: report.notes,
    problems: report.firstProblems.slice(0, IN_JSON),
    problems_listed: Math.min(IN_JSON, report.firstProblems.length),
    evidence: report.evidence
      ? { path: report.evidence.json, sha256: report.evidence.sha256, summary: report.evidence.summary, checksum: report.evidence.checksum }
      : null,
  };
}
