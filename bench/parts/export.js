/**
 * Part 4: export vs a bare paging loop + csv-stringify, each over a sandbox seeded alike; the
 * xlsx report vs the same export to CSV, and its peak RSS at a tenth of the clients (flat?).
 */
import { count, mb, perSecond, row } from '../lib/report.js';
import { exportRun, pagingRun } from '../lib/measure-files.js';

export const name = 'export';

export async function run(ctx) {
  const clients = ctx.sizes.exportClients;
  const baseline = await pagingRun(ctx, clients);
  const exported = await exportRun(ctx, clients);
  const ratio = exported.rowsPerSecond / baseline.rowsPerSecond;
  const xlsx = await exportRun(ctx, clients, 'xlsx');
  const xlsxSmall = await exportRun(ctx, clients / 10, 'xlsx');
  const xlsxRatio = xlsx.rowsPerSecond / exported.rowsPerSecond;
  const growth = xlsx.maxRssMb / xlsxSmall.maxRssMb;
  return [
    row({
      part: '4 export',
      measure: `export ${count(clients)} clients`,
      figure: perSecond(exported.rowsPerSecond),
      baseline: `${perSecond(baseline.rowsPerSecond)} (paging loop + csv-stringify)`,
      ratio,
      target: '≥ 0.80',
      pass: ratio >= 0.8,
      runs: [exported, baseline],
      data: { exported, baseline },
    }),
    row({
      part: '4 export',
      measure: `export ${count(clients)} clients to xlsx`,
      figure: `${perSecond(xlsx.rowsPerSecond)}, peak RSS ${mb(xlsx.maxRssMb)}`,
      baseline: `${perSecond(exported.rowsPerSecond)}, peak RSS ${mb(exported.maxRssMb)} (the same export to CSV)`,
      ratio: xlsxRatio,
      target: '≥ 0.50, RSS ≤ 1.2× CSV',
      pass: xlsxRatio >= 0.5 && xlsx.maxRssMb <= exported.maxRssMb * 1.2,
      runs: [xlsx, exported],
      data: { xlsx, csv: exported },
    }),
    row({
      part: '4 export',
      measure: `xlsx peak RSS, ${count(clients / 10)} → ${count(clients)} clients`,
      figure: `${mb(xlsxSmall.maxRssMb)} → ${mb(xlsx.maxRssMb)}`,
      baseline: `${mb(xlsxSmall.maxRssMb)} (smaller run)`,
      ratio: growth,
      target: '≤ 1.20',
      pass: growth <= 1.2,
      runs: [xlsxSmall, xlsx],
      data: { small: xlsxSmall, large: xlsx },
    }),
  ];
}
