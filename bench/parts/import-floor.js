/**
 * Part 1: import vs the signing floor. The floor signs the importer's exact bodies with the
 * same signer and posts them with a bare undici Pool at the same concurrency, to the same
 * kind of sandbox (verifying signatures), in its own process. The machine's speed drifts by
 * ±10% over minutes, so the floor runs as two halves bracketing the import (A/2 B A/2):
 * linear drift cancels out of the ratio.
 *
 * CPU per row besides the signature: subtracting ~3.4 ms of signing from the import's CPU to
 * find tens of µs is noise, so it is measured directly instead: the same pipeline through the
 * library with a constant signer, beside the same bare loop unsigned (CPU in-process, over
 * the run only), alternately, three times each (medians). The target is on the overhead: what
 * the pipeline costs beyond the bare loop's HTTP, which every request pays in any tool. It is
 * given for the whole run and for its second half: a fresh process spends its first seconds
 * compiling (V8's JIT, on its own threads) and setting up, a fixed cost that a 20,000-row run
 * spreads over its rows and a million-row import does not notice.
 */
import { count, perSecond, row } from '../lib/report.js';
import { importBetweenFloors, unsignedRuns } from '../lib/measure-imports.js';

export const name = 'import';
const REPLAY_CHECK = 20;

const perRowUs = (run) => (run.cpuS / run.rows) * 1e6;

export async function run(ctx) {
  const rows = ctx.sizes.importRows;
  const concurrency = ctx.concurrency;
  const { imported, floor } = await importBetweenFloors(ctx, { rows, concurrency, replayCheck: REPLAY_CHECK });
  const rounds = ctx.sizes.unsignedRounds;
  const unsigned = await unsignedRuns(ctx, { rows, concurrency, rounds });
  const pipelineUs = perRowUs(unsigned.pipeline);
  const bareUs = perRowUs(unsigned.bare);
  const overheadUs = pipelineUs - bareUs;
  const steadyUs = unsigned.pipeline.steadyCpuUs - unsigned.bare.steadyCpuUs;
  const replayed = imported.replayCheck?.['200'] ?? 0;
  const ratio = imported.rowsPerSecond / floor.rowsPerSecond;
  const part = '1 import vs signing floor';
  return [
    row({
      part,
      measure: `import ${count(rows)} rows, C=${concurrency}`,
      figure: perSecond(imported.rowsPerSecond),
      baseline: `${perSecond(floor.rowsPerSecond)} (sign + bare undici, before + after)`,
      ratio,
      target: '≥ 0.90',
      pass: ratio >= 0.9,
      runs: [imported, floor],
      data: { imported, floor },
    }),
    row({
      part,
      measure: `CPU per row besides the signature: pipeline − bare loop (unsigned, ${rounds > 1 ? `medians of ${rounds}` : 'one run'})`,
      figure: `${count(overheadUs)} µs`,
      baseline: `pipeline ${count(pipelineUs)} µs, bare undici loop ${count(bareUs)} µs`,
      ratio: pipelineUs / bareUs,
      target: '≤ 50 µs',
      pass: overheadUs <= 50,
      runs: [unsigned.pipeline, unsigned.bare],
      data: { ...unsigned, pipelineUs, bareUs, overheadUs },
    }),
    row({
      part,
      measure: '  same, second half of each run (after start-up)',
      figure: `${count(steadyUs)} µs`,
      baseline: `pipeline ${count(unsigned.pipeline.steadyCpuUs)} µs, bare undici loop ${count(unsigned.bare.steadyCpuUs)} µs`,
      ratio: unsigned.pipeline.steadyCpuUs / unsigned.bare.steadyCpuUs,
      target: '≤ 50 µs',
      pass: steadyUs <= 50,
      runs: [unsigned.pipeline, unsigned.bare],
      data: { steadyUs },
    }),
    row({
      part,
      measure: '  unsigned-equivalent throughput',
      figure: perSecond(unsigned.pipeline.rowsPerSecond),
      baseline: `${perSecond(unsigned.bare.rowsPerSecond)} (bare undici loop)`,
      ratio: unsigned.pipeline.rowsPerSecond / unsigned.bare.rowsPerSecond,
      runs: [unsigned.pipeline, unsigned.bare],
    }),
    row({
      part,
      measure: `floor posts the importer's bodies (${REPLAY_CHECK} re-sent)`,
      figure: `${replayed}/${REPLAY_CHECK} replayed`,
      baseline: JSON.stringify(imported.replayCheck ?? {}),
      target: 'all 200',
      pass: replayed === REPLAY_CHECK,
    }),
  ];
}
