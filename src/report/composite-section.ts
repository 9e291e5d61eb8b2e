/**
 * The review page's account of fields built from several columns: each field's parts and its
 * first results, as the plan printed them, so the person sees how a name or an address was
 * put together before (or after) it was sent.
 */
import type { Field } from '../import/fields.js';
import { type CompositeField, splitByCountry } from '../import/row/composite.js';
import type { ReportNotes } from './collect.js';
import { esc, table, value } from './html.js';

export function composites(notes: ReportNotes): string {
  const fields = Object.entries(notes.plan.composites ?? {}) as [Field, CompositeField][];
  if (fields.length === 0) return '';
  const rows = fields.map(([field, composite]) => [
    `<code>${esc(field)}</code>`,
    // A known export's address is put together in each row's country's order, not as listed.
    composite.parts.map(value).join(' + ') + (splitByCountry(composite.template).byCountry ? ", in each country's order" : ''),
    `<code>${esc(composite.template)}</code>`,
    composite.samples.map((s) => `${value(s.value)} ← ${s.parts.map(value).join(' + ')}`).join('<br>'),
  ]);
  const recognized = notes.plan.recognized === undefined ? '' : `<p>Recognized: ${esc(notes.plan.recognized)}.</p>`;
  return `<section id="composites"><h2>Fields built from several columns</h2>${recognized}${table(['Field', 'Columns', 'As --map', 'First results'], rows)}</section>`;
}
