/**
 * The import pipeline without its signatures: ccs-bulk's library importClients (read, map,
 * validate, key, send, results file) with a signer that returns a constant, against a sandbox
 * that does not verify. Its CPU per row is what the pipeline costs besides signing.
 * Also measured from the moment half the rows are created to the end: the steady state,
 * without the run's fixed start-up (JIT compilation, first connections, first-use setup).
 * argv[2] is JSON: { url, token, file, results, concurrency, rows }. Prints one JSON line.
 */
import { setFlagsFromString } from 'node:v8';
import { halfway } from './halfway.js';

// As the ccs-bulk command runs (src/bin.cts), before the pipeline's code is loaded.
setFlagsFromString('--no-allocation-site-pretenuring');
setFlagsFromString('--heap-growing-percent=50');
const { createServiceClient, importClients } = await import('../../dist/index.js');

const options = JSON.parse(process.argv[2] ?? '{}');
const client = createServiceClient({
  baseUrl: options.url,
  token: options.token,
  connections: options.concurrency,
  signer: { scheme: { hash: 'sha256', padding: 'pkcs1' }, sign: async () => 'unsigned' },
});
const steady = halfway(options.rows);
const service = {
  ...client,
  async sendCreate(prepared) {
    const reply = await client.sendCreate(prepared);
    steady.done();
    return reply;
  },
};
const cpuBefore = process.cpuUsage();
const summary = await importClients({
  file: options.file,
  service,
  results: options.results,
  concurrency: options.concurrency,
});
const cpu = process.cpuUsage(cpuBefore);
const second = steady.result();
await client.close();
const elapsedS = summary.elapsedMs / 1000;
process.stdout.write(
  `${JSON.stringify({
    rows: summary.rows,
    created: summary.counts.created,
    elapsedS,
    rowsPerSecond: summary.rows / elapsedS,
    cpuS: (cpu.user + cpu.system) / 1e6,
    steady: second,
  })}\n`,
);
