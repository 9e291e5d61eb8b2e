// Signatures per second over a 300-byte body: one at a time (one core's worth) vs the
// libuv thread pool fed by many in flight (all cores), vs signing on the main thread.
// Run: node bench/signing.js [seconds]
import { createPrivateKey, sign } from 'node:crypto';
import { cpus } from 'node:os';
import { createSigner, generateRsaKeyPair } from '../dist/index.js';

const seconds = Number(process.argv[2] ?? 3);

export async function measureSigning(seconds) {
  const { privateKeyPem } = await generateRsaKeyPair();
  const key = createPrivateKey(privateKeyPem);
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
    await Promise.all(Array.from({ length: inFlight }, lane));
    return count / ((Date.now() - started) / 1000);
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
  return { one: await rate(1), pool: await rate(16), mainThread: mainThread(), cores: cpus().length };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await measureSigning(seconds);
  console.log(`RSA-4096 sha256/pkcs1 on ${r.cores} cores, ${seconds}s each:`);
  console.log(
    `  main thread (sync):     ${r.mainThread.toFixed(0)} signatures/s  (${(1000 / r.mainThread).toFixed(2)} ms each)`,
  );
  console.log(`  thread pool, 1 in flight: ${r.one.toFixed(0)} signatures/s`);
  console.log(
    `  thread pool, 16 in flight: ${r.pool.toFixed(0)} signatures/s  (×${(r.pool / r.one).toFixed(2)})`,
  );
}
