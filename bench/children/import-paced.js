/**
 * `import` with no flags through the library, on an emulated machine: a paced signer (the
 * time `threads` signing threads of `ms` each take, on timers: lib/paced-signer.js) against a
 * sandbox that does not verify, and the send window sized for `cores` (the signing places and
 * the backlog it keeps ahead of the wire come from the core count it reads). So this machine's
 * client runs at a many-core signing pace. The CLI has no way to do this: the signer is the
 * library's injection. argv[2] is JSON: { url, token, file, results, cores, threads, ms }.
 * Prints one JSON line: the summary's figures.
 */
import os from 'node:os';
import { syncBuiltinESMExports } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { createPacedSigner } from '../lib/paced-signer.js';

const options = JSON.parse(process.argv[2] ?? '{}');
// The pipeline reads availableParallelism() from node:os: the emulated machine's, before it loads.
os.availableParallelism = () => options.cores;
syncBuiltinESMExports();
// As the ccs-bulk command runs (src/bin.cts), before the pipeline's code is loaded.
setFlagsFromString('--no-allocation-site-pretenuring');
setFlagsFromString('--heap-growing-percent=50');
const { createServiceClient, importClients } = await import('../../dist/index.js');

const signer = createPacedSigner({ threads: options.threads, ms: options.ms });
// Each attempt's answer: when it came and its round trip as this client saw it (the sandbox's
// latency, and the time the answer waited for this process's event loop).
const attempts = [];
const onAttempt = ({ latencyMs }) => void attempts.push(performance.now(), latencyMs);
const client = createServiceClient({ baseUrl: options.url, token: options.token, signer, connections: 16_384, onAttempt });
const summary = await importClients({ file: options.file, service: client, results: options.results, paceMemory: false });
await client.close();
const seenRoundTripMs = settledMean(attempts);
process.stdout.write(
  `${JSON.stringify({ rows: summary.rows, created: summary.counts.created, elapsedMs: summary.elapsedMs, concurrency: summary.concurrency, signed: signer.signed, seenRoundTripMs })}\n`,
);

/** The mean round trip of the answers from 40% to 90% of the run: past its ramp, as the bench's pace once settled. */
function settledMean(pairs) {
  if (pairs.length < 4) return undefined;
  const first = pairs[0];
  const span = pairs[pairs.length - 2] - first;
  let sum = 0;
  let n = 0;
  for (let i = 0; i < pairs.length; i += 2) {
    const at = pairs[i] - first;
    if (at >= 0.4 * span && at <= 0.9 * span) {
      sum += pairs[i + 1];
      n++;
    }
  }
  return n === 0 ? undefined : sum / n;
}
