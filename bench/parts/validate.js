/**
 * Part 3: the front end (read, map, check, key, results file) vs a bare csv-parse pass; and
 * the same rows as an .xlsx (shared strings) vs as CSV, in rows/s and peak memory.
 */
import { count, mb, perSecond, row } from '../lib/report.js';
import { parseRun, validateRun } from '../lib/measure-files.js';

export const name = 'validate';

export async function run(ctx) {
  const rows = ctx.sizes.validateRows;
  const parsed = await parseRun(ctx, rows);
  const validated = await validateRun(ctx, rows);
  const ratio = validated.rowsPerSecond / parsed.rowsPerSecond;
  const xlsx = await validateRun(ctx, rows, 'xlsx');
  const xlsxRatio = xlsx.rowsPerSecond / validated.rowsPerSecond;
  const XLSX_RSS_MB = 250;
  const CSV_RSS_MB = 150;
  return [
    row({
      part: '3 front end vs parser',
      measure: `validate ${count(rows)} rows`,
      figure: perSecond(validated.rowsPerSecond),
      baseline: `${perSecond(parsed.rowsPerSecond)} (csv-parse, columns: true)`,
      ratio,
      target: '≥ 0.70',
      pass: ratio >= 0.7,
      runs: [validated, parsed],
      data: { validated, parsed },
    }),
    row({
      part: '3 .xlsx vs CSV',
      measure: `validate ${count(rows)} rows as .xlsx (shared strings)`,
      figure: perSecond(xlsx.rowsPerSecond),
      baseline: `${perSecond(validated.rowsPerSecond)} (the same rows as CSV)`,
      ratio: xlsxRatio,
      target: '≥ 0.70',
      pass: xlsxRatio >= 0.7,
      runs: [xlsx, validated],
      data: { xlsx, csv: validated },
    }),
    row({
      part: '3 CSV memory',
      measure: `validate ${count(rows)} rows: peak RSS (CSV)`,
      figure: mb(validated.maxRssMb),
      baseline: `${mb(parsed.maxRssMb)} (the bare csv-parse pass)`,
      target: `< ${CSV_RSS_MB} MB`,
      pass: validated.maxRssMb !== undefined && validated.maxRssMb < CSV_RSS_MB,
      data: { validated, parsed },
    }),
    row({
      part: '3 .xlsx memory',
      measure: `peak RSS, validate ${count(rows)} rows as .xlsx`,
      figure: mb(xlsx.maxRssMb),
      baseline: `${mb(validated.maxRssMb)} (the same rows as CSV)`,
      target: `< ${XLSX_RSS_MB} MB`,
      pass: xlsx.maxRssMb !== undefined && xlsx.maxRssMb < XLSX_RSS_MB,
      data: { xlsx, csv: validated },
    }),
  ];
}
