/**
 * The import's own sections of the review page: why it stopped and how to continue, the
 * service's errors by code with their request ids, and the run's course as a chart.
 */
import type { ReportNotes } from './collect.js';
import { chartSvg } from './chart.js';
import { count, esc, rowCell, table, value } from './html.js';
import { marked, more, type ReportEnd, placeWord } from './sections.js';

export function stopped(end: ReportEnd): string {
  if (end.stopped === undefined) return '';
  const resume =
    end.resumeCommand === undefined || end.stopped.reason === 'input_error'
      ? ''
      : `<p>To continue where it stopped:</p><pre class="command"><code>${esc(end.resumeCommand)}</code></pre>`;
  return (
    `<section id="stopped" class="stop"><h2>The run stopped: <code>${esc(end.stopped.code)}</code></h2>` +
    `<p>${value(end.stopped.message)}</p>${resume}</section>`
  );
}

export function serviceErrors(notes: ReportNotes): string {
  const groups = [...notes.serviceErrors.map].sort((a, b) => b[1].total - a[1].total);
  if (groups.length === 0) return '<section id="service-errors"><h2>Service errors</h2><p>None: the service refused no row.</p></section>';
  const parts = groups.map(([code, group]) => {
    const rows = group.items.map((item) => [
      rowCell(item.row),
      item.status === undefined ? '' : String(item.status),
      item.column === '' ? '' : value(item.column),
      marked(item.value),
      value(item.message),
      item.requestId === undefined ? '' : `<code>${value(item.requestId)}</code>`,
    ]);
    return (
      `<section class="group" id="service-${esc(code)}"><h3><code>${esc(code)}</code> — ${count(group.total)} row${group.total === 1 ? '' : 's'}</h3>` +
      `${table([placeWord(notes), 'HTTP', 'Column', 'Value', 'Message', 'Request id'], rows)}${more(group)}</section>`
    );
  });
  if (notes.serviceErrors.overflow > 0) parts.push(`<p class="more">and ${count(notes.serviceErrors.overflow)} rows with other codes</p>`);
  return `<section id="service-errors"><h2>Service errors</h2>${parts.join('\n')}</section>`;
}

export function chart(notes: ReportNotes): string {
  return `<section id="chart"><h2>The run over time</h2>${chartSvg(notes.timeline.points)}</section>`;
}
