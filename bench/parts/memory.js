/**
 * Part 5: peak RSS (GNU time %M of the child) on N vs many more rows: memory must stay flat
 * (≤ +20%) and under 150 MB. Runs already made by other parts are reused.
 */
import { count, mb, row } from '../lib/report.js';
import { exportRun, validateRun } from '../lib/measure-files.js';
import { importRun } from '../lib/measure-imports.js';

export const name = 'memory';
const FLAT = 1.2;
const CEILING_MB = 150;

function pair(what, small, large, runs) {
  const [a, b] = runs.map((run) => run.maxRssMb);
  const known = a !== undefined && b !== undefined;
  const ratio = known ? b / a : undefined;
  return row({
    part: '5 memory (peak RSS)',
    measure: `${what} ${count(small)} → ${count(large)}`,
    figure: `${mb(a)} → ${mb(b)}`,
    baseline: `${mb(a)} (smaller run)`,
    ratio,
    target: `≤ ${FLAT.toFixed(2)}, < ${CEILING_MB} MB`,
    pass: known ? ratio <= FLAT && Math.max(a, b) < CEILING_MB : undefined,
    runs,
    data: { small, large, smallMb: a, largeMb: b },
  });
}

export async function run(ctx) {
  const { memory } = ctx.sizes;
  const concurrency = ctx.concurrency;
  const validate = [await validateRun(ctx, memory.validate[0]), await validateRun(ctx, memory.validate[1])];
  const imports = [
    await importRun(ctx, { rows: memory.import[0], concurrency }),
    await importRun(ctx, { rows: memory.import[1], concurrency }),
  ];
  const exports = [await exportRun(ctx, memory.export[0]), await exportRun(ctx, memory.export[1])];
  return [
    pair('validate rows', ...memory.validate, validate),
    pair('import rows', ...memory.import, imports),
    pair('export clients', ...memory.export, exports),
  ];
}
