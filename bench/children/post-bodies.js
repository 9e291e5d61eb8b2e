/**
 * The floor: bodies from a file, each signed with ccs-bulk's own signer (createSigner, libuv
 * thread pool) and POSTed with a bare undici Pool, `concurrency` lanes. Nothing else: no
 * parsing, validation, results file or retries. Prints one JSON line with rows/s and CPU.
 * argv[2] is JSON: { url, token, bodiesFile, privateKeyFile, concurrency, rows, timeoutMs,
 * unsigned, paced } — with `unsigned`, no signing at all (for a sandbox that does not verify);
 * with `paced` ({ threads, ms }), no signing either, but the time a machine of that many
 * signing threads takes (lib/paced-signer.js): the floor of the many-core bench mode.
 * The second half of the run is also reported apart, as in import-unsigned.js.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { createSigner } from '../../dist/index.js';
import { halfway } from './halfway.js';
import { createPacedSigner } from '../lib/paced-signer.js';

const options = JSON.parse(process.argv[2] ?? '{}');
const bodies = readFileSync(options.bodiesFile, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .slice(0, options.rows)
  .map((line) => Buffer.from(line));
const signer = options.paced
  ? createPacedSigner(options.paced)
  : options.unsigned
    ? { sign: async () => 'unsigned' }
    : createSigner(createPrivateKey(readFileSync(options.privateKeyFile)));
const origin = new URL(options.url).origin;
const pool = new Pool(origin, { connections: options.concurrency, keepAliveTimeout: 30_000 });
const headers = {
  authorization: `Bearer ${options.token}`,
  accept: 'application/json',
  'content-type': 'application/json',
};
const statuses = {};
let next = 0;
const steady = halfway(bodies.length);

const started = performance.now();
const cpuBefore = process.cpuUsage();
const deadline = started + options.timeoutMs;
const lane = async () => {
  while (next < bodies.length && performance.now() < deadline) {
    const body = bodies[next++];
    const signature = await signer.sign(body);
    const response = await pool.request({
      path: '/v1/client',
      method: 'POST',
      headers: { ...headers, 'x-signature': signature },
      body,
    });
    await response.body.text();
    statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
    steady.done();
  }
};
await Promise.all(Array.from({ length: options.concurrency }, lane));
const elapsedS = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const second = steady.result();
await pool.close();
const sent = Object.values(statuses).reduce((a, b) => a + b, 0);
const loopCpuS = (cpu.user + cpu.system) / 1e6;
process.stdout.write(
  `${JSON.stringify({ rows: sent, statuses, elapsedS, rowsPerSecond: sent / elapsedS, loopCpuS, steady: second })}\n`,
);
