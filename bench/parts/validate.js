/** Part 3: the front end (read, map, check, key, results file) vs a bare csv-parse pass. */
import { count, perSecond, row } from '../lib/report.js';
import { parseRun, validateRun } from '../lib/measure-files.js';

export const name = 'validate';

export async function run(ctx) {
  const rows = ctx.sizes.validateRows;
  const parsed = await parseRun(ctx, rows);
  const validated = await validateRun(ctx, rows);
  const ratio = validated.rowsPerSecond / parsed.rowsPerSecond;
  return [
    row({
      part: '3 front end vs parser',
      measure: `validate ${count(rows)} rows`,
      figure: perSecond(validated.rowsPerSecond),
      baseline: `${perSecond(parsed.rowsPerSecond)} (csv-parse, columns: true)`,
      ratio,
      target: '≥ 0.60',
      pass: ratio >= 0.6,
      runs: [validated, parsed],
      data: { validated, parsed },
    }),
  ];
}
