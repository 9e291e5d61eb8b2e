/**
 * One kind of problem on the review page: each value at fault once, with how many rows hold
 * it, their numbers, and who they are (name and e-mail; the first row's other cells behind a
 * <details>), so the person fixing the file finds the people without opening it. Every value
 * from the file is escaped and isolated (html.ts).
 */
import type { ReportNotes } from './collect.js';
import { count, esc, marked, placeWord, table, value } from './html.js';
import { fixOf, suggestionIn } from './problems.js';
import type { Person, ProblemKind, ValueGroup } from './value-groups.js';

export function problemKind(notes: ReportNotes, code: string, kind: ProblemKind): string {
  const groups = kind.sorted();
  const first = groups[0];
  const fix = first === undefined ? undefined : fixOf(first.message);
  const columns = new Set(groups.map((group) => group.column));
  const [only] = columns;
  const where = columns.size === 1 && only !== undefined ? ` in ${only === '' ? 'the whole row' : `column ${value(only)}`}` : '';
  const place = placeWord(notes);
  const headers = [`${place}s`, ...(columns.size > 1 ? ['Column'] : []), 'Value', 'Rows', 'Who', 'Problem', 'Suggestion (not applied)'];
  const rows = groups.map((group) => [
    lines(group),
    ...(columns.size > 1 ? [group.column === '' ? '<span class="muted">(row)</span>' : value(group.column)] : []),
    marked(group.value),
    `<span data-v="${group.total}">×${count(group.total)}</span>`,
    who(group, place),
    value(group.message),
    suggestion(group.message),
  ]);
  const values = kind.values.size;
  return (
    `<section class="group" id="problem-${esc(code)}"><h3><code>${esc(code)}</code>${where} — ${count(kind.total)} row${kind.total === 1 ? '' : 's'}` +
    `${values > 1 ? `, ${count(values)}${kind.unlisted > 0 ? '+' : ''} values` : ''}</h3>` +
    (fix === undefined ? '' : `<p class="fix">Fix: ${esc(fix)}</p>`) +
    table(headers, rows) +
    (kind.unlisted > 0 ? `<p class="more">and ${count(kind.unlisted)} more row${kind.unlisted === 1 ? '' : 's'} with other values</p>` : '') +
    '</section>'
  );
}

/** `4, 5, 9, …`: the first rows' places, the first one the sort key. */
function lines(group: ValueGroup): string {
  const [head, ...rest] = group.lines;
  const more = group.total > group.lines.length ? ', …' : '';
  return `<span data-v="${head}">${head}</span>${rest.map((line) => `, ${line}`).join('')}${more}`;
}

function suggestion(message: string): string {
  const proposed = suggestionIn(message);
  return proposed === undefined ? '' : value(proposed);
}

/** The first row's person; the others kept, and the first row's cells, on demand. */
function who(group: ValueGroup, place: string): string {
  const [first, ...others] = group.people;
  if (first === undefined) return '';
  const cells = group.cells.map(([header, cell]) => `<dt>${value(header)}</dt><dd>${cell === '' ? '<span class="muted">(empty)</span>' : value(cell)}</dd>`).join('');
  const rest = group.total - 1;
  const summary = rest === 0 ? "the row's values" : `${count(rest)} more, and ${place.toLowerCase()} ${first.line}'s values`;
  const list = others.length === 0 ? '' : `<ul class="people">${others.map((person) => `<li>${place} ${person.line}: ${named(person)}</li>`).join('')}${rest > others.length ? `<li class="muted">and ${count(rest - others.length)} more</li>` : ''}</ul>`;
  return `${named(first)}<details><summary>${esc(summary)}</summary>${list}<dl class="cells">${cells}</dl></details>`;
}

/** `Ann Smith · ann@example.com`, each part a value of its own; an empty one says so. */
function named(person: Person): string {
  const name = person.name === '' ? '<span class="muted">(no name)</span>' : `<bdi class="name">${esc(person.name)}</bdi>`;
  const email = person.email === '' ? '<span class="muted">(no e-mail)</span>' : `<bdi class="email">${esc(person.email)}</bdi>`;
  return `${name} · ${email}`;
}
