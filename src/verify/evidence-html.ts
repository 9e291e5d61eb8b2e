/**
 * The evidence's readable summary: one self-contained HTML page (the review page's shell:
 * every value escaped and isolated, nothing loaded from anywhere) with the verdict, the
 * counts, the files compared with their SHA-256, the notes, the first problems, and how to
 * check the evidence file against its checksum.
 */
import { basename } from 'node:path';
import { count, esc, page, table, value } from '../report/html.js';
import { KIND_MEANING, PROBLEM_KINDS, placeOf } from './problems.js';
import type { VerifyReport } from './report.js';

interface Written {
  json: string;
  sha256: string;
  checksum: string;
}

export function renderSummary(report: VerifyReport, evidence: Written): string {
  const title = report.proven ? 'Migration verified: proven' : `Migration verified: ${report.counts.problemsTotal} problem${report.counts.problemsTotal === 1 ? '' : 's'}`;
  return page(title, [`<h1>${esc(title)}</h1>`, facts(report), counts(report), files(report), notes(report), problems(report), checking(evidence)].join('\n'));
}

function facts(report: VerifyReport): string {
  const { listing } = report;
  const window = `${listing.createdFrom ?? 'the first'} to ${listing.createdTo}${listing.toIsRunStart ? ' (the run’s start)' : ''}`;
  const items: [string, string][] = [
    ['verified', `${report.startedAt} – ${report.finishedAt}`],
    ['ccs-bulk', report.toolVersion ?? 'unknown version'],
    ['service', report.service],
    ['clients created', window],
    ['clients listed', count(listing.clients)],
  ];
  return `<dl class="facts">${items.map(([name, text]) => `<dt>${esc(name)}</dt><dd>${value(text)}</dd>`).join('')}</dl>`;
}

function counts(report: VerifyReport): string {
  const { counts: c } = report;
  const item = (n: number, label: string, bad = false) => `<li${bad && n > 0 ? ' class="bad"' : ''}><span class="n">${count(n)}</span>${esc(label)}</li>`;
  const rows = [
    item(c.rows, 'rows'),
    item(c.proven, 'on the service, equal'),
    ...Object.entries(c.accounted).map(([outcome, n]) => item(n, outcome)),
  ];
  const kinds = PROBLEM_KINDS.map((kind) => item(c.problems[kind], kind, true));
  const meaning = PROBLEM_KINDS.map((kind) => `<dt>${esc(kind)}</dt><dd>${esc(KIND_MEANING[kind])}</dd>`).join('');
  return (
    `<section><h2>Rows</h2><ul class="counts">${rows.join('')}</ul></section>\n` +
    `<section><h2>Problems</h2><ul class="counts">${kinds.join('')}</ul><dl class="facts">${meaning}</dl></section>`
  );
}

function files(report: VerifyReport): string {
  const sources = report.sources.map((source) => [
    value(source.path),
    count(source.tally.rows),
    count(source.tally.proven),
    count(Object.values(source.tally.accounted).reduce((a, b) => a + b, 0)),
    count(source.tally.rowsWithProblems),
    `<code>${esc(source.sha256 ?? 'unreadable')}</code>`,
  ]);
  const results = report.results.map((file) => [
    value(file.path),
    value(file.source),
    count(file.lines),
    esc(file.writtenBy ?? 'no sidecar'),
    `<code>${esc(file.sha256 ?? 'unreadable')}</code>`,
  ]);
  return (
    `<section><h2>Files compared</h2>${table(['source', 'rows', 'proven', 'accounted for', 'rows with problems', 'SHA-256'], sources)}\n` +
    `${table(['results file', 'source', 'lines', 'written by', 'SHA-256'], results)}</section>`
  );
}

function notes(report: VerifyReport): string {
  if (report.notes.length === 0) return '';
  return `<section><h2>Notes</h2><ul>${report.notes.map((note) => `<li>${value(note)}</li>`).join('')}</ul></section>`;
}

function problems(report: VerifyReport): string {
  if (report.firstProblems.length === 0) return '<section><h2>Every row proven</h2><p>No problem found.</p></section>';
  const rows = report.firstProblems.map((problem) => [
    esc(problem.kind),
    value(placeOf(problem)),
    value(problem.client_id ?? ''),
    value(problem.field ?? ''),
    problem.service_value === undefined ? '' : problem.service_value === null ? '<span class="muted">none</span>' : value(problem.service_value),
    value(problem.source_value ?? ''),
    value(problem.message),
  ]);
  const more = report.counts.problemsTotal - rows.length;
  const tail = more > 0 ? `<p class="more">… and ${count(more)} more in the evidence file.</p>` : '';
  return `<section><h2>Problems found</h2>${table(['kind', 'where', 'client', 'field', 'service', 'source', 'what'], rows)}${tail}</section>`;
}

function checking(evidence: Written): string {
  return (
    '<section><h2>Checking this evidence</h2>' +
    `<p>The evidence file ${value(basename(evidence.json))} has the SHA-256 <code>${esc(evidence.sha256)}</code>. ` +
    `In its folder, this checks it and this page:</p><pre class="command">sha256sum -c ${esc(basename(evidence.checksum))}</pre></section>`
  );
}
