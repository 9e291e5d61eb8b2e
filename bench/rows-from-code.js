/**
 * importClients({ rows }) at size: N rows from an async generator (a database cursor's shape)
 * against the sandbox in its own process (signatures not verified; the import's signer returns a
 * constant, so the figure is the pipeline's, not RSA's), beside the same rows from a CSV file,
 * each import in a child process of its own so its peak RSS is its own. Needs dist/ (npm run build).
 *
 *   node bench/rows-from-code.js                 # 100,000 rows
 *   node bench/rows-from-code.js --rows 1000000 --only generator  # a million, from the generator alone
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killAll, startSandboxProcess } from './lib/processes.js';

if (process.argv[2] === '--child') await child(JSON.parse(process.argv[3]));
else await main();

async function main() {
  const at = process.argv.indexOf('--rows');
  const rows = at > 0 ? Number(process.argv[at + 1]) : 100_000;
  const dir = await mkdtemp(join(tmpdir(), 'ccs-bench-rows-'));
  const { generateKeyPairSync } = await import('node:crypto');
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKeyFile = join(dir, 'public.pem');
  await (await import('node:fs/promises')).writeFile(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }));
  try {
    const figures = {};
    const only = process.argv.indexOf('--only');
    for (const source of only > 0 ? [process.argv[only + 1]] : ['generator', 'file']) {
      // A fresh service each time: the second run would otherwise find every client held.
      const sandbox = await startSandboxProcess({ publicKeyFile, verifySignatures: false });
      try {
        let file;
        if (source === 'file') {
          file = join(dir, 'rows.csv');
          const out = createWriteStream(file);
          out.write('name,email,country,address\n');
          for (let i = 0; i < rows; i++) if (!out.write(`Client ${i},c${i}@rows.example,DE,Street ${i}\n`)) await once(out, 'drain');
          out.end();
          await once(out, 'finish');
        }
        figures[source] = await runChild({ url: sandbox.url, token: sandbox.token, rows, file, results: join(dir, `${source}.results.csv`) });
      } finally {
        await sandbox.close();
      }
    }
    process.stdout.write(`${JSON.stringify({ rows, node: process.version, ...figures, ...(figures.file && { rssRatio: figures.generator.peakRssMb / figures.file.peakRssMb }) }, null, 2)}\n`);
  } finally {
    killAll();
    await rm(dir, { recursive: true, force: true });
  }
}

async function runChild(options) {
  const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (chunk) => (out += chunk));
  const [code] = await once(proc, 'exit');
  if (code !== 0) throw new Error(`child exited ${code}`);
  return JSON.parse(out);
}

async function child(options) {
  const { createServiceClient, importClients } = await import('../dist/index.js');
  const service = createServiceClient({
    baseUrl: options.url,
    token: options.token,
    connections: 16,
    signer: { scheme: { hash: 'sha256', padding: 'pkcs1' }, sign: async () => 'unsigned' },
  });
  async function* cursor() {
    for (let i = 0; i < options.rows; i++) yield { name: `Client ${i}`, email: `c${i}@rows.example`, country: 'DE', address: `Street ${i}` };
  }
  const started = performance.now();
  const input = options.file === undefined ? { rows: cursor() } : { file: options.file };
  const summary = await importClients({ ...input, service, results: options.results, concurrency: 16, identity: { by: 'none' } });
  const wallS = (performance.now() - started) / 1000;
  await service.close();
  process.stdout.write(JSON.stringify({ created: summary.counts.created, wallS: Math.round(wallS * 10) / 10, rowsPerSecond: Math.round(summary.rows / wallS), peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }));
}
