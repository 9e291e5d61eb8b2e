/**
 * The sandbox in its own process, so the tool under test never shares a CPU queue with it.
 * argv[2] is JSON: { publicKeyFile, verifySignatures, latencyMs, seed, rateLimit, latencySchedule,
 * jitterMs, failRate, throttleRate, seedRandom, port }. Talks to the
 * parent over IPC: sends {type:'ready', url, token}, answers 'stats' and 'peak' (the most
 * requests held at once since the last 'peak', counted again from then), closes on 'close' and
 * exits when the parent goes away.
 */
import { readFileSync } from 'node:fs';
import { startSandbox } from '../../dist/index.js';

const options = JSON.parse(process.argv[2] ?? '{}');
const started = performance.now();
const sandbox = await startSandbox({
  host: '127.0.0.1',
  port: options.port ?? 0,
  publicKeyPem: readFileSync(options.publicKeyFile, 'utf8'),
  verifySignatures: options.verifySignatures !== false,
  ...(options.latencyMs && { latencyMs: options.latencyMs }),
  ...(options.seed && { seed: options.seed }),
  ...(options.rateLimit && { rateLimit: options.rateLimit }),
  ...(options.latencySchedule && { latencySchedule: options.latencySchedule }),
  ...(options.jitterMs && { jitterMs: options.jitterMs }),
  ...(options.failRate && { failRate: options.failRate }),
  ...(options.throttleRate && { throttleRate: options.throttleRate }),
  ...(options.seedRandom && { seedRandom: options.seedRandom }),
});

const stop = async () => {
  await sandbox.close();
  process.exit(0);
};
process.on('disconnect', stop);
process.on('message', (message) => {
  if (message?.type === 'close') void stop();
  if (message?.type === 'stats') {
    const cpu = process.cpuUsage();
    process.send({
      type: 'stats',
      stats: sandbox.stats,
      cpuS: (cpu.user + cpu.system) / 1e6,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      peakInFlight: sandbox.peakInFlight,
    });
  }
  // The most at once since the last 'peak': the bench samples it to tell a run's settled part from its ramp.
  if (message?.type === 'peak') {
    process.send({ type: 'peak', peakInFlight: sandbox.restartPeakInFlight() });
  }
});
process.send({
  type: 'ready',
  url: sandbox.url,
  token: sandbox.token,
  seeded: sandbox.store.size,
  startupS: (performance.now() - started) / 1000,
});
