/**
 * verify at size: N source rows against N clients on a sandbox (100,000 by default), every row
 * created and equal, so the whole proof runs (each row read, normalized, printed, compared; each
 * client listed and printed). The sandbox runs in this process, filled directly (no N signed
 * creates); verify runs in a child process of its own, so its wall time, CPU and peak RSS are
 * its own. Needs dist/ (npm run build).
 *
 *   node bench/verify.js                 # 100,000 rows
 *   node bench/verify.js --rows 1000000  # a million (the sandbox here takes ~1-2 GB)
 *   BENCH_CPU_PROF=prof node bench/verify.js && node bench/summarize-profile.js prof/CPU.*.cpuprofile
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dist = (path) => import(join(ROOT, 'dist', path));

if (process.argv[2] === '--child') await child(process.argv.slice(3));
else await main();

async function main() {
  const at = process.argv.indexOf('--rows');
  const rows = at > 0 ? Number(process.argv[at + 1]) : 100_000;
  const { startSandbox } = await dist('sandbox/index.js');
  const { RESULT_COLUMNS } = await dist('import/record/results.js');
  const dir = await mkdtemp(join(tmpdir(), 'ccs-bulk-bench-verify-'));
  const sandbox = await startSandbox({ verifySignatures: false, maxPageSize: 1000 });
  try {
    const source = join(dir, 'clients.csv');
    await writeLines(source, ['name,email,country,address,currency', ...range(rows, (n) => `Client ${n},client${n}@example.com,${n % 2 ? 'DE' : 'France'},Street ${n},EUR`)]);
    const header = [...RESULT_COLUMNS, 'name', 'email', 'country', 'address', 'currency'].join(',');
    await writeLines(`${source}.results.csv`, [
      header,
      ...range(rows, (n) => `${n},created,${idOf(n)},201,1,ccsb_${n},,,,,,Client ${n},client${n}@example.com,${n % 2 ? 'DE' : 'France'},Street ${n},EUR`),
    ]);
    const start = Date.parse('2025-01-01T00:00:00Z');
    sandbox.store.insertMany(
      range(rows, (n) => ({
        id: idOf(n),
        name: `Client ${n}`,
        email: `client${n}@example.com`,
        country: n % 2 ? 'DE' : 'FR',
        address: `Street ${n}`,
        currency: 'EUR',
        created_at: new Date(start + n * 1000),
      })),
    );
    const result = await runChild([source, sandbox.url, sandbox.token, join(dir, 'evidence.json')]);
    console.log(JSON.stringify({ rows, clients: rows, node: process.version, ...result }, null, 2));
  } finally {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The measured program: verify with --evidence and a page size of 1000, then its own figures. */
async function child([source, url, token, evidence]) {
  const { resolveVerifyOptions } = await dist('verify/options.js');
  const { runVerify } = await dist('commands/verify.js');
  const sink = { write: () => true };
  const started = performance.now();
  const options = await resolveVerifyOptions(
    { sources: [source], evidence, pageSize: 1000, timeout: 60, retries: 2, progressInterval: 10, quiet: true, baseUrl: url },
    { CCS_TOKEN: token },
  );
  const code = await runVerify(options, { stdout: sink, stderr: sink });
  const usage = process.resourceUsage();
  process.stdout.write(
    JSON.stringify({
      exitCode: code,
      wallS: Number(((performance.now() - started) / 1000).toFixed(2)),
      cpuS: Number(((usage.userCPUTime + usage.systemCPUTime) / 1e6).toFixed(2)),
      peakRssMb: Math.round(usage.maxRSS / 1024),
    }),
  );
}

function runChild(args) {
  return new Promise((resolve, reject) => {
    const flags = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    // e.g. BENCH_CHILD_FLAGS=--max-old-space-size=96: how small a heap verify runs in.
    if (process.env.BENCH_CHILD_FLAGS) flags.push(...process.env.BENCH_CHILD_FLAGS.split(' '));
    const proc = spawn(process.execPath, [...flags, fileURLToPath(import.meta.url), '--child', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk) => (out += chunk));
    proc.on('error', reject);
    proc.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`verify child exited ${code}`))));
  });
}

function idOf(n) {
  return `cli_${n.toString(16).padStart(24, '0')}`;
}

function* range(count, make) {
  for (let n = 1; n <= count; n++) yield make(n);
}

async function writeLines(path, lines) {
  const out = createWriteStream(path);
  for (const line of lines) if (!out.write(`${line}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}
