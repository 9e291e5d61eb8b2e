// Signatures per second over a 300-byte body: one at a time (one core's worth) vs the
// libuv thread pool fed by many in flight (all cores), vs signing on the main thread; and
// the CPU one signature costs, which bench/run.js subtracts from an import's CPU.
// Run: node bench/signing.js [seconds]   (bench/run.js calls measureSigning with its own key)
import { createPrivateKey, sign } from 'node:crypto';
import { cpus } from 'node:os';
import { createSigner, generateRsaKeyPair } from '../dist/index.js';

/**
 * @param {number} seconds per measurement (four of them)
 * @param {string} [privateKeyPem] RSA-4096 PKCS#8 PEM; a fresh pair when absent
 */
export async function measureSigning(seconds, privateKeyPem) {
  const pem = privateKeyPem ?? (await generateRsaKeyPair()).privateKeyPem;
  const key = createPrivateKey(pem);
  const signer = createSigner(key);
  const body = Buffer.from(
    JSON.stringify({ name: 'x'.repeat(40), email: 'a@example.com', address: 'y'.repeat(200) }),
  );

  const rate = async (inFlight) => {
    let count = 0;
    const until = Date.now() + seconds * 1000;
    const lane = async () => {
      while (Date.now() < until) {
        await signer.sign(body);
        count++;
      }
    };
    const started = Date.now();
    const cpuBefore = process.cpuUsage();
    await Promise.all(Array.from({ length: inFlight }, lane));
    const cpu = process.cpuUsage(cpuBefore);
    return { perSecond: count / ((Date.now() - started) / 1000), cpuUs: (cpu.user + cpu.system) / count };
  };
  const mainThread = () => {
    let count = 0;
    const started = Date.now();
    while (Date.now() - started < seconds * 1000) {
      sign('sha256', body, key);
      count++;
    }
    return count / ((Date.now() - started) / 1000);
  };
  await rate(1); // warm up
  const one = await rate(1);
  const pool = await rate(16);
  return {
    one: one.perSecond,
    pool: pool.perSecond,
    mainThread: mainThread(),
    cores: cpus().length,
    // Measured with the pool busy, as during an import (both cores signing).
    cpuUsPerSignature: pool.cpuUs,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seconds = Number(process.argv[2] ?? 3);
  const r = await measureSigning(seconds);
  console.log(`RSA-4096 sha256/pkcs1 on ${r.cores} cores, ${seconds}s each:`);
  console.log(
    `  main thread (sync):     ${r.mainThread.toFixed(0)} signatures/s  (${(1000 / r.mainThread).toFixed(2)} ms each)`,
  );
  console.log(`  thread pool, 1 in flight: ${r.one.toFixed(0)} signatures/s`);
  console.log(
    `  thread pool, 16 in flight: ${r.pool.toFixed(0)} signatures/s  (×${(r.pool / r.one).toFixed(2)}, ${r.cpuUsPerSignature.toFixed(0)} µs CPU each)`,
  );
}
