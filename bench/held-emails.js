/**
 * What an import pays to learn who the service holds before its first row: N clients on a
 * sandbox (its own process, seeded), listed by a fresh process three ways, each measured with
 * its peak RSS: the export of the same clients to a pipe (the baseline: the same pager), the
 * first run (no held file) and a repeat run (the held file, nothing new). Prints one line each
 * and the ratios. `node bench/held-emails.js [N]` (default 1,000,000; needs `npm run build`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateRsaKeyPair } from '../dist/service/signing.js';
import { killAll, runMeasured, startSandboxProcess } from './lib/processes.js';

const count = Number(process.argv[2] ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), 'ccs-bulk-bench-held-'));
const bin = fileURLToPath(new URL('../dist/bin.cjs', import.meta.url));
const child = fileURLToPath(new URL('./children/learn-held.js', import.meta.url));
try {
  const publicKeyFile = join(dir, 'public.pem');
  writeFileSync(publicKeyFile, (await generateRsaKeyPair()).publicKeyPem);
  const sandbox = await startSandboxProcess({ publicKeyFile, seed: count }, { timeoutMs: 600_000 });
  const env = { ...process.env, CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
  const measure = async (label, command, args) => {
    const run = await runMeasured(command, args, { env, timeoutMs: 1_200_000, statsFile: join(dir, `${label}.time`) });
    if (run.code !== 0) throw new Error(`${label}: exit ${run.code}: ${run.stderr.slice(-2000)}`);
    return run;
  };
  const exported = await measure('export', process.execPath, [bin, 'export', '--out', '-', '--quiet']);
  const cache = join(dir, 'held.txt');
  const first = await measure('first', process.execPath, [child, sandbox.url, sandbox.token, cache]);
  const repeat = await measure('repeat', process.execPath, [child, sandbox.url, sandbox.token, cache]);
  const line = (label, run) => {
    const figures = label === 'export' ? {} : JSON.parse(run.stdout);
    const rate = Math.round(count / run.wallS);
    console.log(
      `${label.padEnd(7)} ${run.wallS.toFixed(1).padStart(6)} s  peak RSS ${run.maxRssMb === undefined ? '?' : Math.round(run.maxRssMb)} MB` +
        (figures.listed === undefined ? `  (${rate.toLocaleString('en')} clients/s)` : `  listed ${figures.listed}, requests ${figures.requests}, from held file ${figures.fromCache}, table ${figures.tableMb.toFixed(1)} MB, heap ${figures.heapMb.toFixed(1)} MB`),
    );
  };
  console.log(`${count.toLocaleString('en')} clients on the sandbox (page size 100)`);
  line('export', exported);
  line('first', first);
  line('repeat', repeat);
  console.log(`first run / export: ${(first.wallS / exported.wallS).toFixed(2)} (time), ${((first.maxRssMb ?? NaN) / (exported.maxRssMb ?? NaN)).toFixed(2)} (peak RSS)`);
  await sandbox.close();
} finally {
  killAll();
  rmSync(dir, { recursive: true, force: true });
}
