/** Part 4: export vs a bare paging loop + csv-stringify, each over a sandbox seeded alike. */
import { count, perSecond, row } from '../lib/report.js';
import { exportRun, pagingRun } from '../lib/measure-files.js';

export const name = 'export';

export async function run(ctx) {
  const clients = ctx.sizes.exportClients;
  const baseline = await pagingRun(ctx, clients);
  const exported = await exportRun(ctx, clients);
  const ratio = exported.rowsPerSecond / baseline.rowsPerSecond;
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
  ];
}
