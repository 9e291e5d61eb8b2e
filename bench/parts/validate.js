/**
 * Part 3: the front end (read, map, check, key, results file) vs a bare csv-parse pass; and
 * the same rows as an .xlsx (shared strings) vs as CSV, in rows/s and peak memory.
 */
import { count, mb, perSecond, row } from '../lib/report.js';
import { parseRun, validateRun } from '../lib/measure-files.js';

export const name = 'validate';

export async function run(ctx) {
  const rows = ctx.sizes.validateRows;
  const times = ctx.sizes.validateRounds;
  // A run alone moves ±10% with the machine's other load (it is shared): the three are run in
  // turn, `times` times, and each ratio is the median of its rounds'.
  const rounds = [];
  for (let round = 1; round <= times; round++) {
    const parsed = await parseRun(ctx, rows, round);
    const validated = await validateRun(ctx, rows, 'csv', round);
    const xlsx = await validateRun(ctx, rows, 'xlsx', round);
    rounds.push({ parsed, validated, xlsx, ratio: validated.rowsPerSecond / parsed.rowsPerSecond, xlsxRatio: xlsx.rowsPerSecond / validated.rowsPerSecond });
  }
  const byRatio = medianBy(rounds, (round) => round.ratio);
  const byXlsxRatio = medianBy(rounds, (round) => round.xlsxRatio);
  const { parsed, validated, ratio } = byRatio;
  const { xlsx, xlsxRatio } = byXlsxRatio;
  const xlsxCsv = byXlsxRatio.validated;
  // Memory: the highest peak of the rounds.
  const csvPeak = highest(rounds.map((round) => round.validated));
  const xlsxPeak = highest(rounds.map((round) => round.xlsx));
  const of = times > 1 ? ` (median of ${times} rounds)` : '';
  const ratios = (pick) => rounds.map((round) => Number(pick(round).toFixed(2)));
  const XLSX_RSS_MB = 250;
  const CSV_RSS_MB = 150;
  return [
    row({
      part: '3 front end vs parser',
      measure: `validate ${count(rows)} rows${of}`,
      figure: perSecond(validated.rowsPerSecond),
      baseline: `${perSecond(parsed.rowsPerSecond)} (csv-parse, columns: true)`,
      ratio,
      target: '≥ 0.70',
      pass: ratio >= 0.7,
      runs: [validated, parsed],
      data: { validated, parsed, ratios: ratios((round) => round.ratio) },
    }),
    row({
      part: '3 .xlsx vs CSV',
      measure: `validate ${count(rows)} rows as .xlsx (shared strings)${of}`,
      figure: perSecond(xlsx.rowsPerSecond),
      baseline: `${perSecond(xlsxCsv.rowsPerSecond)} (the same rows as CSV)`,
      ratio: xlsxRatio,
      target: '≥ 0.70',
      pass: xlsxRatio >= 0.7,
      runs: [xlsx, xlsxCsv],
      data: { xlsx, csv: xlsxCsv, ratios: ratios((round) => round.xlsxRatio) },
    }),
    row({
      part: '3 CSV memory',
      measure: `validate ${count(rows)} rows: peak RSS (CSV${times > 1 ? `, highest of ${times} runs` : ''})`,
      figure: mb(csvPeak.maxRssMb),
      baseline: `${mb(parsed.maxRssMb)} (the bare csv-parse pass)`,
      target: `< ${CSV_RSS_MB} MB`,
      pass: csvPeak.maxRssMb !== undefined && csvPeak.maxRssMb < CSV_RSS_MB,
      data: { validated: csvPeak, parsed, peaks: rounds.map((round) => round.validated.maxRssMb) },
    }),
    row({
      part: '3 .xlsx memory',
      measure: `peak RSS, validate ${count(rows)} rows as .xlsx${times > 1 ? ` (highest of ${times} runs)` : ''}`,
      figure: mb(xlsxPeak.maxRssMb),
      baseline: `${mb(csvPeak.maxRssMb)} (the same rows as CSV)`,
      target: `< ${XLSX_RSS_MB} MB`,
      pass: xlsxPeak.maxRssMb !== undefined && xlsxPeak.maxRssMb < XLSX_RSS_MB,
      data: { xlsx: xlsxPeak, csv: csvPeak, peaks: rounds.map((round) => round.xlsx.maxRssMb) },
    }),
  ];
}

/** The round whose `value` is the median (the lower middle of an even count). */
function medianBy(rounds, value) {
  const sorted = [...rounds].sort((a, b) => value(a) - value(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function highest(runs) {
  return runs.reduce((most, run) => ((run.maxRssMb ?? 0) > (most.maxRssMb ?? 0) ? run : most));
}
