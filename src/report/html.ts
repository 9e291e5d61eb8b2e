/**
 * The review page's HTML primitives: escaping, direction isolation, and the page's shell with
 * its own style and script. Every value from a file is data: it is escaped and set inside a
 * `<bdi>`, so `<img src=x onerror=…>` shows as text and a right-to-left override in a name
 * cannot reverse the cells after it. The Content-Security-Policy allows the page's one style
 * and one script by hash and nothing from anywhere else.
 */
import { createHash } from 'node:crypto';
import type { ReportNotes } from './collect.js';

const SPECIAL = /[&<>"']/g;
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for an element's content or a quoted attribute. */
export function esc(text: string): string {
  return text.replace(SPECIAL, (char) => ENTITY[char]!);
}

/** A value from the file: escaped and isolated for direction. */
export function value(text: string): string {
  return `<bdi>${esc(text)}</bdi>`;
}

/** A sample value: a value in a box of its own, so values holding commas stay apart. */
export function sample(text: string): string {
  return `<bdi class="sample">${esc(text)}</bdi>`;
}

/** Text outside any element (the title): isolated with FSI … PDI, the characters `<bdi>` stands for. */
export function isolatedText(text: string): string {
  return esc(`\u2068${text}\u2069`);
}

/** The offending value, highlighted; an empty one says so. */
export function marked(text: string | undefined): string {
  if (text === undefined) return '';
  return text === '' ? '<mark class="empty">(empty)</mark>' : `<mark>${value(text)}</mark>`;
}

/** Rows are named as the file shows them: a CSV's line, a worksheet's row. */
export function placeWord(notes: ReportNotes): 'Line' | 'Row' {
  return notes.plan.source.format === 'csv' ? 'Line' : 'Row';
}

/** `1,234`: counts read at a glance. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** A sortable, filterable table (the script finds `table.data`); cells are given as HTML. */
export function table(headers: readonly string[], rows: readonly string[][], caption?: string): string {
  const head = headers.map((header) => `<th scope="col">${esc(header)}</th>`).join('');
  const body = rows.map((cells) => `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('\n');
  return (
    `<div class="table"><table class="data">${caption === undefined ? '' : `<caption>${esc(caption)}</caption>`}` +
    `<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody></table></div>`
  );
}

/** A row number cell's HTML with its numeric sort key. */
export function rowCell(row: number): string {
  return `<span data-v="${row}">${row}</span>`;
}

const STYLE = `
:root { color-scheme: light; --bad: #fde2e4; --mark: #ffd0d6; --muted: #5b6470; --line: #d8dde3; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1180px; padding: 20px 28px 60px; color: #1d2329; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 22px 0 6px; } code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
bdi, td, th { unicode-bidi: isolate; } .muted { color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; } dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
ul.counts { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0; }
ul.counts li { border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; min-width: 92px; }
ul.counts li.bad { background: var(--bad); } ul.counts .n { display: block; font-size: 22px; font-weight: 600; }
table.data { border-collapse: collapse; width: 100%; margin: 6px 0; font-size: 14px; }
div.table { overflow-x: auto; } table.data th, table.data td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; overflow-wrap: break-word; }
table.data th { background: #f3f5f7; white-space: nowrap; } table.data th button { all: unset; cursor: pointer; font-weight: 600; }
table.data th[aria-sort=ascending] button::after { content: " \\25B2"; } table.data th[aria-sort=descending] button::after { content: " \\25BC"; }
table.data td code { white-space: nowrap; } .sample { display: inline-block; border: 1px solid var(--line); border-radius: 4px; padding: 0 5px; margin: 1px 4px 1px 0; white-space: pre-wrap; }
mark { background: var(--mark); padding: 0 2px; border-radius: 3px; } mark.empty { font-style: italic; color: var(--muted); }
.fix { margin: 2px 0 6px; } .more { color: var(--muted); font-style: italic; }
input.filter { margin: 4px 0; padding: 4px 8px; width: 260px; border: 1px solid var(--line); border-radius: 6px; }
pre.command { background: #f3f5f7; padding: 10px 12px; border-radius: 6px; overflow-x: auto; }
svg.chart { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
svg .pause { fill: #fbe3b0; } svg .rate { fill: none; stroke: #1f6feb; stroke-width: 2; } svg .flight { fill: none; stroke: #b3261e; stroke-width: 1.5; stroke-dasharray: 4 3; }
svg .axis { stroke: #9aa4ae; stroke-width: 1; } svg text { font-size: 12px; fill: #4a525b; }
.stop { border-left: 4px solid #b3261e; background: var(--bad); padding: 8px 12px; }
td details { margin-top: 2px; } td summary { cursor: pointer; color: var(--muted); font-size: 13px; }
dl.cells { display: grid; grid-template-columns: max-content 1fr; gap: 0 10px; margin: 4px 0; font-size: 13px; } dl.cells dt { color: var(--muted); } dl.cells dd { margin: 0; }
ul.people { margin: 4px 0; padding-left: 18px; font-size: 13px; }
`;

/** Sorts a table by a clicked header (numbers as numbers); adds a filter box to longer tables. */
const SCRIPT = `(function () {
  function key(cell) {
    var mark = cell.querySelector('[data-v]');
    var text = mark ? mark.getAttribute('data-v') : cell.textContent;
    var number = Number(text);
    return text !== '' && !isNaN(number) ? number : text.toLowerCase();
  }
  function compare(a, b) {
    if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.data'), function (table) {
    var body = table.tBodies[0];
    var heads = table.querySelectorAll('thead th');
    Array.prototype.forEach.call(heads, function (th, index) {
      var button = document.createElement('button');
      button.type = 'button';
      button.textContent = th.textContent;
      th.textContent = '';
      th.appendChild(button);
      button.addEventListener('click', function () {
        var direction = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
        Array.prototype.forEach.call(heads, function (other) { other.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', direction === 1 ? 'ascending' : 'descending');
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) { return direction * compare(key(a.cells[index]), key(b.cells[index])); });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
    if (body.rows.length < 8) return;
    var input = document.createElement('input');
    input.type = 'search';
    input.className = 'filter';
    input.placeholder = 'Filter these rows';
    input.setAttribute('aria-label', 'Filter these rows');
    input.addEventListener('input', function () {
      var wanted = input.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (row) {
        row.hidden = wanted !== '' && row.textContent.toLowerCase().indexOf(wanted) < 0;
      });
    });
    table.parentNode.insertBefore(input, table);
  });
})();`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Nothing from anywhere else: only this style and this script, images only as data: URLs. */
export const CONTENT_SECURITY_POLICY =
  `default-src 'none'; style-src ${hash(STYLE)}; script-src ${hash(SCRIPT)}; img-src data:; ` +
  "base-uri 'none'; form-action 'none'";

/** The whole page around its sections' HTML. */
export function page(title: string, body: string): string {
  return (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n' +
    `<meta http-equiv="Content-Security-Policy" content="${esc(CONTENT_SECURITY_POLICY)}">\n` +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<meta name="referrer" content="no-referrer">\n<title>${isolatedText(title)}</title>\n` +
    `<style>${STYLE}</style></head>\n<body>\n${body}\n<script>${SCRIPT}</script>\n</body></html>\n`
  );
}
