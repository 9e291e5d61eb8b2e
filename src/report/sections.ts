/**
 * The review page's sections, each plain HTML from the notes gathered during the run: the
 * file, the outcome counts, the column mapping, the normalizations, the problems, the
 * duplicates. The import's own sections (service errors, chart, stop) are in import-sections.ts.
 */
import { foldHeader, type Field } from '../import/fields.js';
import { describeEncoding, positionWord } from '../import/read/types.js';
import type { Normalization } from '../import/record/run-notes.js';
import type { Group, ReportNotes } from './collect.js';
import { count, esc, marked, placeWord, rowCell, sample, table, value } from './html.js';
import { problemKind } from './problem-section.js';

export { marked, placeWord };

/** The run's end as the page needs it (the summary's figures). */
export interface ReportEnd {
  rows: number;
  counts: Readonly<Record<string, number>>;
  /** Of `created`: clients the service held already (replays). */
  /** Of `created`: replays of clients the service held before the run. */
  replayed: number;
  normalizations: readonly Normalization[];
  stopped: { reason: string; message: string; code: string } | undefined;
  elapsedMs: number;
  rowsPerSecond: number;
  results: string;
  failed: string | undefined;
  /** The command that continues a stopped import. */
  resumeCommand: string | undefined;
  /** When the page was made. */
  at: Date;
}

export function overview(notes: ReportNotes, end: ReportEnd): string {
  const { source, dryRun } = notes.plan;
  const facts: [string, string][] = [
    ['File', value(source.file)],
    ['Format', esc(source.format === 'csv' ? 'CSV (text)' : source.format === 'rows' ? 'rows from code' : `${source.format} spreadsheet`)],
  ];
  if (source.format === 'csv') {
    facts.push(['Encoding', esc(describeEncoding(source))]);
    facts.push(['Delimiter', `<code>${value(JSON.stringify(source.delimiter))}</code> <span class="muted">(${esc(source.delimiterSource)})</span>`]);
  } else {
    facts.push(['Sheet', value(source.sheet ?? '')]);
  }
  const { header } = source;
  const where = positionWord(source.format);
  const skipped = header.skipped.length === 0 ? '' : `; ${where}s ${header.skipped.join(', ')} above it skipped (not data)`;
  facts.push(['Header row', esc(`${where} ${header.line} (${header.source === 'option' ? '--header-row' : header.source === 'found' ? 'found below a title' : 'the first'})${skipped}`)]);
  facts.push(['Rows', `${count(end.rows)} in ${esc(formatSeconds(end.elapsedMs))} (${count(end.rowsPerSecond)} rows/s)`]);
  facts.push(['Results file', value(end.results)]);
  if (end.failed !== undefined) facts.push(['Rows to fix', value(end.failed)]);
  facts.push(['Made', esc(end.at.toISOString().replace(/\.\d+Z$/, 'Z'))]);
  const dl = facts.map(([term, detail]) => `<dt>${esc(term)}</dt><dd>${detail}</dd>`).join('');
  return `<header><h1>ccs-bulk ${dryRun ? 'validate' : 'import'}: ${value(source.file)}</h1><dl class="facts">${dl}</dl></header>`;
}

const VALIDATE_OUTCOMES = ['valid', 'invalid', 'duplicate'];
const IMPORT_OUTCOMES = ['created', 'existing', 'failed', 'invalid', 'duplicate', 'skipped', 'not_attempted'];
const BAD = new Set(['invalid', 'failed', 'not_attempted']);

/** One box per outcome; `data-count` holds the exact figure (the summary's `counts`). */
export function counts(notes: ReportNotes, end: ReportEnd): string {
  // A validate that asked the service (--check-service) has `existing` rows too.
  const outcomes = notes.plan.dryRun ? [...VALIDATE_OUTCOMES, ...((end.counts.existing ?? 0) > 0 ? ['existing'] : [])] : IMPORT_OUTCOMES;
  const items = outcomes.map((outcome) => {
    const n = end.counts[outcome] ?? 0;
    const label = outcome === 'created' && end.replayed > 0 ? `created (${count(end.replayed)} replayed: already there)` : outcome.replace('_', ' ');
    return `<li${BAD.has(outcome) && n > 0 ? ' class="bad"' : ''}><span class="n" data-count="${outcome}">${count(n)}</span>${esc(label)}</li>`;
  });
  return `<section id="counts"><h2>Outcomes</h2><ul class="counts"><li><span class="n" data-count="rows">${count(end.rows)}</span>rows</li>${items.join('')}</ul></section>`;
}

export function mapping(notes: ReportNotes): string {
  const { headers, columns, map } = notes.plan;
  const fieldOf = new Map(Object.entries(columns).map(([field, index]) => [index, field as Field]));
  // Each part of a field built from several columns feeds it too.
  for (const [field, composite] of Object.entries(notes.plan.composites ?? {})) {
    for (const part of composite.parts) fieldOf.set(headers.indexOf(part), field as Field);
  }
  const rows = headers.map((header, index) => {
    const field = fieldOf.get(index);
    const how = field === undefined ? 'ignored' : map[field] !== undefined ? `--map ${field}=…` : foldHeader(header) === foldHeader(field) ? 'its name' : 'a known alias';
    const samples = notes.samples[index]!.map(sample).join(' ');
    return [value(header), field === undefined ? '<span class="muted">—</span>' : `<code>${field}</code>`, esc(how), samples];
  });
  const ignored = notes.plan.unknown.length === 0 ? '' : `<p>Ignored columns (not sent): ${notes.plan.unknown.map(value).join(', ')}</p>`;
  return `<section id="mapping"><h2>Column mapping</h2>${table(['Header in the file', 'Field', 'Matched by', 'Sample values'], rows)}${ignored}</section>`;
}

export function normalizations(list: readonly Normalization[]): string {
  if (list.length === 0) return '<section id="normalized"><h2>Values changed on the way</h2><p>None: every value was sent as the file has it.</p></section>';
  const rows = list.map((n) => {
    if (n.field === 'application_date') return [`<code>${n.field}</code>`, `dates read as ${esc(n.from)}`, esc(n.to), countCell(n.count)];
    if (n.field === '(any)') return ['any', esc(n.from), esc(n.to), countCell(n.count)];
    return [`<code>${esc(n.field)}</code>`, value(n.from), value(n.to), countCell(n.count)];
  });
  return `<section id="normalized"><h2>Values changed on the way</h2>${table(['Field', 'From', 'To', 'Rows'], rows)}</section>`;
}

/** Problems grouped by code, most frequent first; in each, its values (problem-section.ts). */
export function problems(notes: ReportNotes, invalidRows: number): string {
  const groups = [...notes.problems.map].sort((a, b) => b[1].total - a[1].total);
  if (groups.length === 0) return '<section id="problems"><h2>Problems</h2><p>None: every row passed its checks.</p></section>';
  const parts = groups.map(([code, kind]) => problemKind(notes, code, kind));
  if (notes.problems.overflow > 0) parts.push(`<p class="more">and ${count(notes.problems.overflow)} problems of other kinds</p>`);
  return `<section id="problems"><h2>Problems in ${count(invalidRows)} invalid rows</h2>${parts.join('\n')}</section>`;
}

export function more(group: Group<unknown>): string {
  const rest = group.total - group.items.length;
  return rest > 0 ? `<p class="more">and ${count(rest)} more</p>` : '';
}

export function duplicates(notes: ReportNotes): string {
  const { duplicates: groups } = notes;
  if (notes.duplicateTotal === 0) return '<section id="duplicates"><h2>Duplicates</h2><p>None.</p></section>';
  const rows = [...groups.map].map(([first, group]) => [
    rowCell(Number(first)),
    group.items.map((item) => `${item.row}`).join(', ') + (group.total > group.items.length ? `, and ${count(group.total - group.items.length)} more` : ''),
    value(group.items[0]?.name ?? ''),
    value(group.items[0]?.email ?? ''),
    countCell(group.total),
  ]);
  const rest = groups.overflow > 0 ? `<p class="more">and ${count(groups.overflow)} more duplicate rows of other first rows</p>` : '';
  return (
    `<section id="duplicates"><h2>Duplicates: ${count(notes.duplicateTotal)} row${notes.duplicateTotal === 1 ? '' : 's'}</h2>` +
    '<p>Each row below repeats an earlier row (the same idempotency key): it was not sent again.</p>' +
    `${table([`First ${placeWord(notes).toLowerCase()}`, `Repeated in ${placeWord(notes).toLowerCase()}s`, 'Name', 'E-mail', 'Repeats'], rows)}${rest}</section>`
  );
}

export function countCell(n: number): string {
  return `<span data-v="${n}">${count(n)}</span>`;
}

export function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
