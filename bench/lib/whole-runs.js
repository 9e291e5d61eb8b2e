/**
 * Whole runs at a distance, as a many-core machine's table is measured: per round trip,
 * `import` with no flags beside the floor (a bare client that signs on every core with the
 * signing rate × the round trip in flight, 4 a core at least), each a whole process against a
 * fresh sandbox, rows over its whole wall time (start-up included); with the most requests the
 * sandbox held at once, where `import` settled, and its peak RSS. The machine is this one
 * (its cores, its measured signing rate, real RSA-4096 signatures) or an emulated one (a paced
 * signer of that many threads against a sandbox that does not verify: children/import-paced.js).
 */
import { availableParallelism, cpus } from 'node:os';
import { rmSync } from 'node:fs';
import { bodies, dataset } from './make-inputs.js';
import { BIN, child, foreignCores, lastJson, runNode, sandbox, tempPath, timeoutFor } from './run-child.js';
import { count, mb, perSecond, row } from './report.js';

export const WHOLE_RUN_RTTS = [0, 150, 300, 500];
/** The emulated machine: 16 signing threads at 6.8 ms a signature (the 16-core machine measured: ~2,300 rows/s). */
export const MANY_CORES = { cores: 16, ms: 6.8 };

/** This machine: its cores and the signing rate part 0 measured on them. */
export function thisMachine(ctx) {
  const cores = availableParallelism();
  const rate = ctx.signing?.pool ?? 250 * cores;
  return { label: `this machine (${cores} × ${cpus()[0]?.model ?? 'cpu'}, ${count(rate)} signatures/s)`, cores, rate, paced: undefined };
}

/** A machine of `cores` signing threads at `ms` each, emulated on this one (BENCH_MANY_CORES=N picks N). */
export function emulatedMachine(cores = MANY_CORES.cores, ms = MANY_CORES.ms) {
  const rate = (cores * 1000) / ms;
  return { label: `${cores} cores emulated (paced signer, ${count(Math.round(rate))} signatures/s; sandbox not verifying)`, cores, rate, paced: { threads: cores, ms } };
}

const cpu = (ms) => (ms === undefined ? '?' : `${Math.round(ms * 1000)} µs`);
const load = (cores) => (cores === undefined ? '?' : `${cores.toFixed(1)} cores`);

/** One row per round trip: import with no flags ÷ its floor, whole processes. */
export async function wholeRunTable(ctx, machine, { rows, part }) {
  const out = [];
  for (const latencyMs of WHOLE_RUN_RTTS) {
    const inFlight = Math.max(4 * machine.cores, Math.ceil((machine.rate * latencyMs) / 1000));
    ctx.log(`  ${machine.label}, ${latencyMs} ms: the floor (${count(inFlight)} in flight), then import with no flags (${count(rows)} rows)…`);
    const floor = await floorRun(ctx, machine, { rows, latencyMs, inFlight });
    const run = await importRun(ctx, machine, { rows, latencyMs });
    const ratio = run.rowsPerSecond / floor.rowsPerSecond;
    // Once settled: the pace past the ramp, not the whole run's (start-up and ramp included).
    const pace = run.settledPace ?? run.rowsPerSecond;
    const bound = 1.5 * pace * (latencyMs / 1000) + 16;
    // The paced client's round trips as it saw them once settled: its own event loop's wait for
    // each answer holds a slot too, and the pace needs that many more in flight.
    const seen = run.seenRoundTripMs;
    const seenBound = seen === undefined ? undefined : 1.5 * pace * (Math.max(latencyMs, seen) / 1000) + 16;
    const asSeen = seenBound === undefined ? '' : ` (the round trip as the client saw it, ${Math.round(seen)} ms: ${count(Math.round(seenBound))})`;
    out.push(
      row({
        part,
        measure: `${machine.label}, ${latencyMs} ms, ${count(rows)} rows, no flags, whole run (settled ${run.settled}; at most ${count(run.peakInFlight)} at the service at once, ${run.settledPeak === undefined ? '?' : count(run.settledPeak)} once settled; its pace once settled ${count(Math.round(pace))}/s, 1.5 × that × round trip + 16 = ${count(Math.round(bound))}${asSeen}; peak RSS ${mb(run.maxRssMb)}; CPU a row ${cpu(run.clientCpuMs)} client, ${cpu(run.serverCpuMs)} sandbox; other load ${load(run.foreignCores)})`,
        figure: perSecond(run.rowsPerSecond),
        baseline: `${perSecond(floor.rowsPerSecond)} (floor, ${count(inFlight)} in flight; at most ${count(floor.peakInFlight)} at the service)`,
        ratio,
        target: '≥ 0.90, RSS < 250 MB',
        pass: ratio >= 0.9 && (run.maxRssMb ?? 0) < 250,
        runs: [run, floor],
        data: { machine, latencyMs, floor, run, bound, seenBound },
      }),
    );
  }
  return out;
}

async function floorRun(ctx, machine, { rows, latencyMs, inFlight }) {
  const service = await sandbox(ctx, { latencyMs, verifySignatures: machine.paced === undefined });
  try {
    const options = {
      url: service.url,
      token: service.token,
      bodiesFile: await bodies(ctx, Math.max(rows, ctx.sizes.importRows)),
      privateKeyFile: ctx.keys.privateKeyFile,
      paced: machine.paced,
      concurrency: inFlight,
      rows,
      timeoutMs: timeoutFor(rows, 20),
    };
    const before = await service.stats();
    const result = await runNode(ctx, child('post-bodies'), [JSON.stringify(options)], { timeoutMs: options.timeoutMs + 10_000, label: 'floor' });
    const posted = lastJson(result.stdout, 'floor');
    if (posted.statuses['200'] !== rows) throw new Error(`floor: statuses ${JSON.stringify(posted.statuses)}`);
    const stats = await service.stats();
    return { rowsPerSecond: rows / result.wallS, wallS: result.wallS, maxRssMb: result.maxRssMb, peakInFlight: stats.peakInFlight, ...cpuPerRow(result, before, stats, rows) };
  } finally {
    await service.close();
  }
}

async function importRun(ctx, machine, { rows, latencyMs }) {
  const csv = await dataset(ctx, rows);
  const service = await sandbox(ctx, { latencyMs, verifySignatures: machine.paced === undefined });
  const results = tempPath(ctx, 'whole-run.results.csv');
  try {
    const before = await service.stats();
    const sampling = samplePace(service);
    const imported = machine.paced === undefined ? realImport(ctx, service, csv, results, rows) : pacedImport(ctx, machine, service, csv, results, rows);
    const result = await imported.finally(() => sampling.stop());
    const samples = await sampling.stop();
    const settledPace = steadyPace(samples);
    const summary = lastJson(result.stdout, 'import');
    const created = summary.counts?.created ?? summary.created;
    if (created !== rows) throw new Error(`import: ${created} of ${rows} created`);
    const stats = await service.stats();
    const run = {
      rowsPerSecond: rows / result.wallS,
      settledPace,
      seenRoundTripMs: summary.seenRoundTripMs,
      wallS: result.wallS,
      maxRssMb: result.maxRssMb,
      settled: summary.concurrency.settled,
      // Sampling restarts the sandbox's peak: the run's is the most of every sample's and what came after.
      peakInFlight: Math.max(stats.peakInFlight, ...samples.map((sample) => sample.peak)),
      settledPeak: steadyPeak(samples),
      ...cpuPerRow(result, before, stats, rows),
    };
    ctx.log(`    floor done; import ${Math.round(run.rowsPerSecond)} rows/s, settled ${run.settled}, at most ${run.peakInFlight} at the service (${run.settledPeak ?? '?'} once settled)`);
    return run;
  } finally {
    await service.close();
    rmSync(results, { force: true });
  }
}

/**
 * CPU a row, ms: the client's process (its event loop and, with real signatures, its signing
 * threads) and the sandbox's; with the run's other load on the machine (cores' worth), which
 * the pace simulation's calibration needs to model this machine.
 */
function cpuPerRow(result, before, after, rows) {
  return {
    clientCpuMs: result.cpuS === undefined ? undefined : (result.cpuS * 1000) / rows,
    serverCpuMs: ((after.cpuS - before.cpuS) * 1000) / rows,
    foreignCores: foreignCores(result, after.cpuS - before.cpuS),
  };
}

/**
 * The sandbox's count of requests every 250 ms while a run lasts, and the most it held at once
 * since the sample before, until stop() (which returns them).
 */
function samplePace(service) {
  const samples = [];
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      const { stats } = await service.stats();
      const peak = await service.peak();
      samples.push({ at: performance.now(), requests: stats.requests, peak });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await sampling;
      return samples;
    },
  };
}

/** Samples from 40% to 90% of a run: past its ramp, before its last answers trail off (undefined: too short to tell). */
function steadySpan(samples) {
  if (samples.length < 8) return undefined;
  const start = samples[0].at;
  const span = samples[samples.length - 1].at - start;
  const from = samples.findIndex((sample) => sample.at >= start + 0.4 * span);
  const to = samples.findLastIndex((sample) => sample.at <= start + 0.9 * span);
  if (from < 0 || to <= from) return undefined;
  return samples.slice(from, to + 1);
}

/** Requests a second once settled (steadySpan). */
function steadyPace(samples) {
  const steady = steadySpan(samples);
  if (steady === undefined) return undefined;
  const [from, to] = [steady[0], steady[steady.length - 1]];
  return ((to.requests - from.requests) * 1000) / (to.at - from.at);
}

/** The most at the service at once once settled: each sample's peak covers the 250 ms before it, so the first is left out. */
function steadyPeak(samples) {
  const steady = steadySpan(samples);
  return steady === undefined ? undefined : Math.max(...steady.slice(1).map((sample) => sample.peak));
}

/** The real CLI, RSA-4096 signatures, a pace memory of its own (a first run). */
function realImport(ctx, service, csv, results, rows) {
  const args = ['import', csv, '--results', results, '--quiet', '--json'];
  const env = { CCS_BASE_URL: service.url, CCS_TOKEN: service.token, CCS_SIGNING_KEY_FILE: ctx.keys.privateKeyFile, XDG_CACHE_HOME: tempPath(ctx, 'whole-run-cache') };
  return runNode(ctx, BIN, args, { env, timeoutMs: timeoutFor(rows, 20), label: 'ccs-bulk import', tool: true });
}

function pacedImport(ctx, machine, service, csv, results, rows) {
  const options = { url: service.url, token: service.token, file: csv, results, cores: machine.cores, ...machine.paced };
  return runNode(ctx, child('import-paced'), [JSON.stringify(options)], { timeoutMs: timeoutFor(rows, 20), label: 'import (paced signer)', tool: true });
}
