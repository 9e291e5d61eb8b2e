/** Part 0: the signing ceiling on this machine, and the CPU one signature costs. */
import { systemBusySeconds } from '../lib/processes.js';
import { count, row } from '../lib/report.js';
import { measureSigning } from '../signing.js';

export const name = 'signing';

export async function run(ctx) {
  ctx.log('  RSA-4096 signing rates (this process, nothing else of ours running)…');
  const busyBefore = systemBusySeconds();
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  const r = await measureSigning(ctx.sizes.signingSeconds, ctx.keys.privateKeyPem);
  const own = process.cpuUsage(ownBefore);
  const busy = systemBusySeconds() - busyBefore;
  // What other processes used meanwhile, as for every other run (see foreignCores).
  const measured = {
    foreignCores: Math.max(0, (busy - (own.user + own.system) / 1e6) / ((performance.now() - started) / 1000)),
  };
  ctx.signing = r;
  const part = '0 signing';
  return [
    row({
      part,
      measure: 'RSA-4096 signatures, thread pool, 16 in flight',
      figure: `${count(r.pool)} /s`,
      baseline: `1 in flight ${count(r.one)}/s; main thread ${count(r.mainThread)}/s`,
      runs: [measured],
      data: r,
    }),
    row({
      part,
      measure: 'CPU per signature',
      figure: `${count(r.cpuUsPerSignature)} µs`,
      runs: [measured],
      data: r,
    }),
  ];
}
