/**
 * Part 2: latency-bound import. With 50 ms per request, C requests in flight can do at most
 * C / 0.05 s. Signing caps every import too (~560/s on two idle cores), so each C is also set
 * beside the signed bare loop at the same C and latency, and the unsigned-equivalent pipeline
 * (library, constant signer) shows whether the pipeline itself keeps C requests in flight,
 * over the whole run and over its second half (after the start-up: connections, JIT). The
 * signed floor runs in two halves around the import, as in part 1, so drift cancels out.
 */
import { count, perSecond, row } from '../lib/report.js';
import { importBetweenFloors, unsignedRuns } from '../lib/measure-imports.js';

export const name = 'latency';
const LATENCY_MS = 50;
const CONCURRENCIES = [16, 64, 256];
/** Unsigned runs are fast: enough rounds of C requests that ramp-up and tail stay under ~3%. */
const UNSIGNED_ROUNDS = 40;

export async function run(ctx) {
  const out = [];
  const part = '2 latency-bound';
  for (const concurrency of CONCURRENCIES) {
    const rows = ctx.sizes.latencyRows;
    const ideal = concurrency / (LATENCY_MS / 1000);
    const { imported, floor } = await importBetweenFloors(ctx, { rows, concurrency, latencyMs: LATENCY_MS });
    const unsignedRows = Math.max(rows, concurrency * UNSIGNED_ROUNDS);
    const unsigned = await unsignedRuns(ctx, { rows: unsignedRows, concurrency, latencyMs: LATENCY_MS });
    out.push(
      row({
        part,
        measure: `import ${count(rows)} rows, C=${concurrency}, ${LATENCY_MS} ms`,
        figure: perSecond(imported.rowsPerSecond),
        baseline: `${perSecond(ideal)} (C/latency)`,
        ratio: imported.rowsPerSecond / ideal,
        target: '≥ 0.90',
        pass: imported.rowsPerSecond / ideal >= 0.9,
        runs: [imported],
        data: { imported, ideal },
      }),
      row({
        part,
        measure: `  same, vs signed bare loop at C=${concurrency}`,
        figure: perSecond(imported.rowsPerSecond),
        baseline: `${perSecond(floor.rowsPerSecond)} (sign + bare undici, before + after)`,
        ratio: imported.rowsPerSecond / floor.rowsPerSecond,
        target: '≥ 0.90',
        pass: imported.rowsPerSecond / floor.rowsPerSecond >= 0.9,
        runs: [imported, floor],
        data: { floor },
      }),
      row({
        part,
        measure: `  unsigned-equivalent pipeline, ${count(unsignedRows)} rows`,
        figure: perSecond(unsigned.pipeline.rowsPerSecond),
        baseline: `${perSecond(ideal)} (C/latency); bare loop ${perSecond(unsigned.bare.rowsPerSecond)}`,
        ratio: unsigned.pipeline.rowsPerSecond / ideal,
        target: '≥ 0.90',
        pass: unsigned.pipeline.rowsPerSecond / ideal >= 0.9,
        runs: [unsigned.pipeline, unsigned.bare],
        data: { unsigned },
      }),
      row({
        part,
        measure: `  same, second half of the run (after start-up)`,
        figure: perSecond(unsigned.pipeline.steady.rowsPerSecond),
        baseline: `${perSecond(ideal)} (C/latency); bare loop ${perSecond(unsigned.bare.steady.rowsPerSecond)}`,
        ratio: unsigned.pipeline.steady.rowsPerSecond / ideal,
        target: '≥ 0.90',
        pass: unsigned.pipeline.steady.rowsPerSecond / ideal >= 0.9,
        runs: [unsigned.pipeline, unsigned.bare],
      }),
    );
  }
  return out;
}
