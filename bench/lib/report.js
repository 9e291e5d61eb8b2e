/**
 * Rows of the results table and their text: every figure beside its floor or baseline, the
 * ratio, the target and pass/miss, plus how much other people's load there was meanwhile.
 */

/** Contention above this many cores' worth of foreign CPU marks a row as suspect. */
export const CONTENDED_CORES = 0.25;

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
export const count = (value) => number.format(value);
export const perSecond = (value) => `${number.format(value)} rows/s`;
export const mb = (value) => (value === undefined ? 'n/a' : `${value.toFixed(0)} MB`);

/**
 * @param {{part: string, measure: string, figure: string, baseline?: string, ratio?: number,
 *   target?: string, pass?: boolean, runs?: object[], data?: object}} row
 */
export function row({ part, measure, figure, baseline = '—', ratio, target = '—', pass, runs = [], data }) {
  const foreign = runs.map((run) => run?.foreignCores).filter((value) => value !== undefined);
  return {
    part,
    measure,
    figure,
    baseline,
    ratio: ratio === undefined ? undefined : Math.round(ratio * 100) / 100,
    target,
    result: pass === undefined ? 'info' : pass ? 'pass' : 'MISS',
    otherLoad: foreign.length > 0 ? Math.max(...foreign) : undefined,
    data,
  };
}

export function errorRow(part, error) {
  return {
    part,
    measure: 'failed to run',
    figure: String(error?.message ?? error)
      .split('\n')[0]
      .slice(0, 100),
    baseline: '—',
    ratio: undefined,
    target: '—',
    result: 'ERROR',
    otherLoad: undefined,
  };
}

const HEADINGS = ['Part', 'Measure', 'Figure', 'Floor / baseline', 'Ratio', 'Target', 'Result', 'Other load'];

function cells(r) {
  const load = r.otherLoad === undefined ? '' : `${r.otherLoad.toFixed(2)}${r.otherLoad > CONTENDED_CORES ? ' ⚠' : ''}`;
  return [
    r.part,
    r.measure,
    r.figure,
    r.baseline,
    r.ratio === undefined ? '—' : r.ratio.toFixed(2),
    r.target,
    r.result,
    load,
  ];
}

/** A Markdown table: readable in a terminal, pastable into the README. */
export function formatTable(rows) {
  const table = [HEADINGS, ...rows.map(cells)];
  const widths = HEADINGS.map((_, i) => Math.max(...table.map((line) => line[i].length)));
  const line = (values) => `| ${values.map((value, i) => value.padEnd(widths[i])).join(' | ')} |`;
  const rule = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
  return [line(HEADINGS), rule, ...table.slice(1).map(line)].join('\n');
}
