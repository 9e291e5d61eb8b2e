/**
 * Part: `--concurrency auto`. Against a rate-limited sandbox (150/s, 50 ms) beside fixed 8
 * and 64 (rows/s, share of requests answered 429); at 150 ms with no limit beside the signed
 * floor (the bare signed loop at the best C of a sweep) and fixed 8; a latency step
 * 20 → 300 → 20 ms with the limit over time (from the progress lines); two shards sharing
 * one rate limit; export's `--prefetch auto` at 50 and 300 ms beside a sweep of fixed prefetch;
 * (`paging`) a 60,000-client export at 50 ms beside the bare paging loop at its best prefetch,
 * and the export's CPU a client (bench/children/export-cpu.js); with no
 * flags at 150 and 300 ms beside the signed bare loop at C = signing rate × RTT × 1.5, under a
 * 100/s limit, and the peak RSS with 1,000 requests in flight; against a flaky service (2% 5xx
 * and 1% 429 at random, 120 ± 80 ms) beside fixed 64; and a repeat run from pace memory. Each
 * import or export is the real CLI in its own process; the sandbox in another. Every import
 * keeps its pace memory in a cache folder of its own (a first run), but the repeat's second.
 * Two pieces run only when named: `cores`, whole runs at 0–500 ms on this machine with the
 * floor's in flight sized from its cores and signing rate; `many`, the same on an emulated
 * machine of BENCH_MANY_CORES (default 16) signing threads: a paced signer given through the
 * library, against a sandbox that does not verify (lib/whole-runs.js).
 * BENCH_ADAPTIVE=limit,floor,distance,step,shards,export,noise,memory,cores,many runs some of these pieces only.
 */
import { dataset } from '../lib/make-inputs.js';
import { floorRun } from '../lib/measure-imports.js';
import { BIN, child, lastJson, outcome, runNode, sandbox, sandboxCpu, tempPath, timeoutFor } from '../lib/run-child.js';
import { count, perSecond, row } from '../lib/report.js';
import { rmSync } from 'node:fs';
import { emulatedMachine, thisMachine, wholeRunTable } from '../lib/whole-runs.js';

export const name = 'adaptive';
const LIMIT = 150;
const PIECES = ['limit', 'floor', 'distance', 'step', 'shards', 'export', 'paging', 'noise', 'memory'];
/** Named only: minutes each at full size (40,000 rows a run, eight runs). */
const NAMED_ONLY = ['cores', 'many'];
let caches = 0;

/** One or more `ccs-bulk import` processes at once against one sandbox: rows/s (summed), 429 share, limits. */
async function imports(ctx, { rows, sandboxOptions, concurrency = 'auto', shards = 1, progress = false, cache = tempPath(ctx, `adaptive-cache-${++caches}`), service: given }) {
  const csv = await dataset(ctx, rows);
  const service = given ?? (await sandbox(ctx, sandboxOptions));
  try {
    const before = await service.stats();
    const started = performance.now();
    const runs = await Promise.all(
      Array.from({ length: shards }, (_, i) => {
        const results = tempPath(ctx, `adaptive-${i}.results.csv`);
        const args = ['import', csv, '--results', results, '--json', '--concurrency', String(concurrency)];
        if (shards > 1) args.push('--shard', `${i + 1}/${shards}`);
        args.push(...(progress ? ['--progress-interval', '1'] : ['--quiet']));
        return runNode(ctx, BIN, args, {
          env: { CCS_BASE_URL: service.url, CCS_TOKEN: service.token, CCS_SIGNING_KEY_FILE: ctx.keys.privateKeyFile, XDG_CACHE_HOME: cache },
          timeoutMs: 600_000,
          label: 'ccs-bulk import',
          tool: true,
        }).then((result) => {
          rmSync(results, { force: true });
          return { result, summary: lastJson(result.stdout, 'ccs-bulk import') };
        });
      }),
    );
    const wallS = (performance.now() - started) / 1000;
    const after = await service.stats();
    const requests = after.stats.requests - before.stats.requests;
    const throttled = after.stats.faults.rateLimited - before.stats.faults.rateLimited;
    const refused = ['throttle', 'fail'].reduce((sum, kind) => sum + after.stats.faults[kind] - before.stats.faults[kind], 0);
    const created = runs.reduce((sum, run) => sum + run.summary.counts.created, 0);
    if (created !== rows) throw new Error(`${created} of ${rows} created`);
    // Summed over shards: the rows over the longest run.
    const elapsedS = Math.max(...runs.map((run) => run.summary.elapsedMs / 1000));
    return {
      rows,
      rowsPerSecond: rows / elapsedS,
      elapsedS,
      wallS,
      requests,
      throttledShare: throttled / requests,
      refusedShare: refused / requests,
      limits: runs.map((run) => run.summary.concurrency),
      maxRssMb: Math.max(...runs.map((run) => run.result.maxRssMb ?? 0)),
      stderr: runs.map((run) => run.result.stderr),
    };
  } finally {
    if (!given) await service.close();
  }
}

const share = (value) => `${(value * 100).toFixed(1)}% 429`;
const limits = (run) => run.limits.map((l) => (l.mode === 'auto' ? `settled ${l.settled}` : `C=${l.current}`)).join(' + ');

/** The progress lines' `in flight limit`, one per second: "t s: limit". */
function limitOverTime(stderr) {
  const points = [];
  for (const line of stderr.split('\n')) {
    const match = /^ccs-bulk: (\d+) rows, (\d+)\/s.*in flight limit (\d+)/.exec(line);
    if (match) points.push({ t: points.length + 1, rows: Number(match[1]), limit: Number(match[3]) });
  }
  return points;
}

const part = 'adaptive';
const limited = { latencyMs: 50, rateLimit: LIMIT };

export async function run(ctx) {
  const chosen = process.env.BENCH_ADAPTIVE?.split(',').map((piece) => piece.trim()) ?? PIECES;
  const all = [...PIECES, ...NAMED_ONLY];
  const unknown = chosen.filter((piece) => !all.includes(piece));
  if (unknown.length > 0) throw new Error(`BENCH_ADAPTIVE: unknown piece ${unknown.join(', ')} (pieces: ${all.join(', ')})`);
  const pieces = { limit: rateLimited, floor: signedFloor, distance, step: latencyStep, shards: twoShards, export: exportPrefetch, paging: exportBesidePaging, noise: flaky, memory: remembered, cores: wholeRunsHere, many: wholeRunsEmulated };
  const out = [];
  for (const piece of all) if (chosen.includes(piece)) out.push(...(await pieces[piece](ctx)));
  return out;
}

/** Rate limit 150/s at 50 ms: auto, fixed 8 and fixed 64. */
async function rateLimited(ctx) {
  const out = [];
  const rows = ctx.quick ? 1500 : 6000;
  ctx.log(`  rate limit ${LIMIT}/s, 50 ms: auto, fixed 8, fixed 64 (${count(rows)} rows each)…`);
  const auto = await imports(ctx, { rows, sandboxOptions: limited });
  out.push(
    row({
      part,
      measure: `rate limit ${LIMIT}/s, 50 ms, ${count(rows)} rows: auto (${limits(auto)})`,
      figure: `${perSecond(auto.rowsPerSecond)}, ${share(auto.throttledShare)}`,
      baseline: `${perSecond(LIMIT)} (the limit)`,
      ratio: auto.rowsPerSecond / LIMIT,
      target: '≥ 0.90, ≤ 2% 429',
      pass: auto.rowsPerSecond / LIMIT >= 0.9 && auto.throttledShare <= 0.02,
      data: auto,
    }),
  );
  for (const concurrency of [8, 64]) {
    const fixed = await imports(ctx, { rows, sandboxOptions: limited, concurrency });
    out.push(
      row({
        part,
        measure: `  same, fixed --concurrency ${concurrency}`,
        figure: `${perSecond(fixed.rowsPerSecond)}, ${share(fixed.throttledShare)}`,
        baseline: `${perSecond(LIMIT)} (the limit)`,
        ratio: fixed.rowsPerSecond / LIMIT,
        data: fixed,
      }),
    );
  }
  return out;
}

/** 150 ms, no limit: auto beside the signed floor and fixed 8. */
async function signedFloor(ctx) {
  const slowRows = ctx.quick ? 1000 : 3000;
  ctx.log(`  150 ms, no limit: auto vs the signed floor (sweep) and fixed 8 (${count(slowRows)} rows)…`);
  const slowAuto = await imports(ctx, { rows: slowRows, sandboxOptions: { latencyMs: 150 } });
  let best;
  for (const concurrency of [32, 64, 128]) {
    const floor = await floorRun(ctx, { rows: slowRows, concurrency, latencyMs: 150 });
    if (!best || floor.rowsPerSecond > best.rowsPerSecond) best = { ...floor, concurrency };
  }
  const slowFixed = await imports(ctx, { rows: slowRows, sandboxOptions: { latencyMs: 150 }, concurrency: 8 });
  return [
    row({
      part,
      measure: `150 ms, no limit, ${count(slowRows)} rows: auto (${limits(slowAuto)})`,
      figure: perSecond(slowAuto.rowsPerSecond),
      baseline: `${perSecond(best.rowsPerSecond)} (signed bare loop, best of C=32/64/128: C=${best.concurrency})`,
      ratio: slowAuto.rowsPerSecond / best.rowsPerSecond,
      target: '≥ 0.90',
      pass: slowAuto.rowsPerSecond / best.rowsPerSecond >= 0.9,
      data: { slowAuto, best },
    }),
    row({
      part,
      measure: '  same, fixed --concurrency 8',
      figure: perSecond(slowFixed.rowsPerSecond),
      baseline: `${perSecond(8 / 0.15)} (C/latency)`,
      ratio: slowFixed.rowsPerSecond / (8 / 0.15),
      data: slowFixed,
    }),
  ];
}

/**
 * No flags, at a distance: `import` at 150 and 300 ms beside the signed bare loop given what it
 * needs (C = this machine's signing rate × the round trip × 1.5), so the floor is the signer's,
 * not a cap's; under a 100/s limit; and the peak RSS with 1,000 requests in flight.
 */
async function distance(ctx) {
  const rows = ctx.quick ? 1000 : 3000;
  const signingRate = ctx.signing?.pool ?? 300;
  const out = [];
  for (const latencyMs of [150, 300]) {
    const concurrency = Math.ceil(signingRate * (latencyMs / 1000) * 1.5);
    ctx.log(`  ${latencyMs} ms, no flags vs the signed bare loop at C=${concurrency} (${count(rows)} rows)…`);
    const auto = await imports(ctx, { rows, sandboxOptions: { latencyMs } });
    const floor = await floorRun(ctx, { rows, concurrency, latencyMs });
    out.push(
      row({
        part,
        measure: `${latencyMs} ms, ${count(rows)} rows, no flags (${limits(auto)})`,
        figure: perSecond(auto.rowsPerSecond),
        baseline: `${perSecond(floor.rowsPerSecond)} (signed bare loop, C=${concurrency} = ${count(signingRate)}/s × ${latencyMs} ms × 1.5)`,
        ratio: auto.rowsPerSecond / floor.rowsPerSecond,
        target: '≥ 0.90',
        pass: auto.rowsPerSecond / floor.rowsPerSecond >= 0.9,
        data: { auto, floor },
      }),
    );
  }
  ctx.log(`  rate limit 100/s, no flags (${count(rows)} rows)…`);
  const limitedRun = await imports(ctx, { rows, sandboxOptions: { rateLimit: 100 } });
  out.push(
    row({
      part,
      measure: `rate limit 100/s, ${count(rows)} rows, no flags (${limits(limitedRun)})`,
      figure: `${perSecond(limitedRun.rowsPerSecond)}, ${share(limitedRun.throttledShare)}`,
      baseline: `${perSecond(100)} (the limit)`,
      ratio: limitedRun.rowsPerSecond / 100,
      target: '≥ 0.90, ≤ 2% 429',
      pass: limitedRun.rowsPerSecond / 100 >= 0.9 && limitedRun.throttledShare <= 0.02,
      data: limitedRun,
    }),
  );
  // 1,000 in flight: a round trip long enough that signing fills them (5 s × 200/s).
  ctx.log(`  1,000 requests in flight (--concurrency 1000, 5 s a request, ${count(rows)} rows)…`);
  const wide = await imports(ctx, { rows, sandboxOptions: { latencyMs: 5000 }, concurrency: 1000 });
  out.push(
    row({
      part,
      measure: `peak RSS, import with 1,000 requests in flight (${count(rows)} rows, 5 s each)`,
      figure: `${Math.round(wide.maxRssMb)} MB`,
      baseline: `${perSecond(wide.rowsPerSecond)}`,
      target: '< 200 MB',
      pass: wide.maxRssMb < 200,
      data: wide,
    }),
  );
  return out;
}

/** Latency 20 → 300 → 20 ms: the limit at each second. */
async function latencyStep(ctx) {
  const stepRows = ctx.quick ? 2000 : 6000;
  ctx.log(`  latency 20 → 300 → 20 ms at 8 s and 16 s (${count(stepRows)} rows)…`);
  const step = await imports(ctx, {
    rows: stepRows,
    sandboxOptions: { latencySchedule: [{ atMs: 0, latencyMs: 20 }, { atMs: 8000, latencyMs: 300 }, { atMs: 16_000, latencyMs: 20 }] },
    progress: true,
  });
  const points = limitOverTime(step.stderr[0]);
  return [
    row({
      part,
      measure: `latency step 20 → 300 (8 s) → 20 ms (16 s): limit at each second`,
      figure: points.map((p) => `${p.t}s:${p.limit}`).join(' '),
      baseline: `${perSecond(step.rowsPerSecond)} over the run`,
      data: { step, points },
    }),
  ];
}

/** Two shards against one rate limit. */
async function twoShards(ctx) {
  const shardRows = ctx.quick ? 1500 : 6000;
  ctx.log(`  two shards, rate limit ${LIMIT}/s, 50 ms (${count(shardRows)} rows)…`);
  const shards = await imports(ctx, { rows: shardRows, sandboxOptions: limited, shards: 2 });
  return [
    row({
      part,
      measure: `two shards (auto each: ${limits(shards)}), rate limit ${LIMIT}/s, 50 ms`,
      figure: `${perSecond(shards.rowsPerSecond)} summed, ${share(shards.throttledShare)}`,
      baseline: `${perSecond(LIMIT)} (the limit)`,
      ratio: shards.rowsPerSecond / LIMIT,
      target: '≥ 0.90, ≤ 3% 429',
      pass: shards.rowsPerSecond / LIMIT >= 0.9 && shards.throttledShare <= 0.03,
      data: shards,
    }),
  ];
}

/** Per round trip, the fixed --prefetch values swept for the paging floor: past what 60,000 clients/s × the round trip in pages of 100 need. */
const PREFETCH_SWEEPS = { 50: [2, 4, 8, 16, 32, 64], 300: [32, 64, 128, 256, 512] };
const PAIRS = 3;

/**
 * One `ccs-bulk export` of every client of `service` (page size 100) at `--prefetch prefetch`,
 * with the pace memory in `cache` (none given: a fresh one, removed after: `auto` a first run).
 */
async function exportAt(ctx, service, clients, prefetch, cache = undefined) {
  const out = tempPath(ctx, 'adaptive-export.csv');
  const memory = cache ?? tempPath(ctx, 'adaptive-export-cache');
  const before = await service.stats();
  try {
    const args = ['export', '--out', out, '--page-size', '100', '--prefetch', String(prefetch), '--quiet', '--json'];
    const result = await runNode(ctx, BIN, args, {
      env: { CCS_BASE_URL: service.url, CCS_TOKEN: service.token, XDG_CACHE_HOME: memory },
      timeoutMs: timeoutFor(clients, 500),
      label: 'ccs-bulk export',
      tool: true,
    });
    const summary = lastJson(result.stdout, 'ccs-bulk export');
    if (summary.rows !== clients) throw new Error(`export: ${summary.rows} of ${clients} clients`);
    const served = await sandboxCpu(service, before);
    const run = { ...outcome(result, summary, clients, served.cpuS), limits: summary.prefetch };
    ctx.log(`    prefetch ${prefetch}: ${Math.round(run.rowsPerSecond)} rows/s${prefetch === 'auto' ? ` (settled ${run.limits.settled})` : ''}`);
    return run;
  } finally {
    rmSync(out, { force: true });
    if (cache === undefined) rmSync(memory, { recursive: true, force: true });
  }
}

/** PAIRS rounds of `round(cache)`, each given a pace memory folder of its own, removed after. */
async function roundsWithMemory(ctx, name, round) {
  const pairs = [];
  for (let i = 0; i < PAIRS; i++) {
    const cache = tempPath(ctx, name);
    try {
      pairs.push(await round(cache));
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  }
  return pairs;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Export at 50 ms: `--prefetch auto` beside the best fixed prefetch of a sweep. The best of a
 * sweep is the luckiest of several noisy runs, so auto and that prefetch are then run in
 * alternating pairs and their medians compared. One sandbox serves every run (exports only read).
 */
async function exportPrefetch(ctx) {
  const rows = [];
  for (const latencyMs of [50, 300]) rows.push(...(await exportPrefetchAt(ctx, latencyMs)));
  return rows;
}

/** `--prefetch auto` against the best fixed --prefetch of a sweep (the paging floor), at one round trip. */
async function exportPrefetchAt(ctx, latencyMs) {
  const clients = ctx.quick ? 20_000 : 250_000;
  const sweepValues = PREFETCH_SWEEPS[latencyMs];
  ctx.log(`  export at ${latencyMs} ms, ${count(clients)} clients: a sweep of --prefetch ${sweepValues.join('/')}, then auto vs the best…`);
  const service = await sandbox(ctx, { seed: clients, latencyMs, verifySignatures: false });
  try {
    const sweep = [];
    for (const prefetch of sweepValues) sweep.push({ prefetch, ...(await exportAt(ctx, service, clients, prefetch)) });
    const best = sweep.reduce((a, b) => (b.rowsPerSecond > a.rowsPerSecond ? b : a));
    // A first run (no pace memory), the floor, then a repeat from what the first one left.
    const pairs = await roundsWithMemory(ctx, 'adaptive-export-memory', async (cache) => {
      const auto = await exportAt(ctx, service, clients, 'auto', cache);
      const fixed = await exportAt(ctx, service, clients, best.prefetch);
      return { auto, fixed, repeat: await exportAt(ctx, service, clients, 'auto', cache) };
    });
    const auto = median(pairs.map((pair) => pair.auto.rowsPerSecond));
    const fixed = median(pairs.map((pair) => pair.fixed.rowsPerSecond));
    const repeat = median(pairs.map((pair) => pair.repeat.rowsPerSecond));
    const settled = pairs.map((pair) => pair.auto.limits.settled).join('/');
    const started = pairs.map((pair) => pair.repeat.limits.start).join('/');
    const runs = [...sweep, ...pairs.flatMap((pair) => [pair.auto, pair.fixed, pair.repeat])];
    return [
      row({
        part,
        measure: `export ${count(clients)} clients at ${latencyMs} ms: --prefetch auto, a first run (settled ${settled})`,
        figure: perSecond(auto),
        baseline: `${perSecond(fixed)} (best of the sweep: --prefetch ${best.prefetch}; medians of ${PAIRS} alternating pairs)`,
        ratio: auto / fixed,
        target: '≥ 0.90',
        pass: auto / fixed >= 0.9,
        runs,
        data: { latencyMs, sweep, pairs, best: best.prefetch },
      }),
      row({
        part,
        measure: `  same, a repeat from the first run's pace memory (started at ${started})`,
        figure: perSecond(repeat),
        baseline: `${perSecond(fixed)} (the same floor)`,
        ratio: repeat / fixed,
        target: '≥ 0.90',
        pass: repeat / fixed >= 0.9,
        runs: pairs.map((pair) => pair.repeat),
      }),
      row({
        part,
        measure: '  same, the sweep of fixed --prefetch (one run each)',
        figure: sweep.map((run) => `${run.prefetch}: ${count(run.rowsPerSecond)}`).join(', '),
        baseline: 'rows/s',
        runs: sweep,
      }),
    ];
  } finally {
    await service.close();
  }
}

/** The bare paging loop (bench/children/page-clients.js) over every client of `service` at `prefetch`: clients/s, CPU. */
async function pagingAt(ctx, service, clients, prefetch) {
  const out = tempPath(ctx, 'adaptive-paged.csv');
  const options = { url: service.url, token: service.token, out, pageSize: 100, prefetch, maxPages: Math.ceil(clients / 100) + 2, timeoutMs: timeoutFor(clients, 500) };
  try {
    const result = await runNode(ctx, child('page-clients'), [JSON.stringify(options)], { timeoutMs: options.timeoutMs + 10_000, label: 'bare paging loop' });
    const summary = lastJson(result.stdout, 'paging loop');
    if (summary.rows !== clients) throw new Error(`paging loop: ${summary.rows} of ${clients} clients`);
    ctx.log(`    bare loop, prefetch ${prefetch}: ${Math.round(summary.rowsPerSecond)} rows/s`);
    return { prefetch, rowsPerSecond: summary.rowsPerSecond, cpuS: result.cpuS, wallS: result.wallS };
  } finally {
    rmSync(out, { force: true });
  }
}

/**
 * A 60,000-client export at 50 ms with no flags (a first run, and a repeat from its pace memory)
 * beside the bare paging loop + csv-stringify at the best prefetch of a sweep, in alternating
 * pairs; then the export's CPU a client, start-up cancelled (bench/children/export-cpu.js: a
 * 60,000-client export less a 1,000-client one), the whole process and its main thread.
 */
async function exportBesidePaging(ctx) {
  const clients = ctx.smoke ? 2000 : ctx.quick ? 20_000 : 60_000;
  const latencyMs = 50;
  ctx.log(`  export of ${count(clients)} clients at ${latencyMs} ms beside the bare paging loop (a sweep of its prefetch, then alternating pairs)…`);
  const service = await sandbox(ctx, { seed: clients, latencyMs, verifySignatures: false });
  const rows = [];
  try {
    const sweep = [];
    for (const prefetch of [4, 8, 16, 32, 64]) sweep.push(await pagingAt(ctx, service, clients, prefetch));
    const best = sweep.reduce((a, b) => (b.rowsPerSecond > a.rowsPerSecond ? b : a));
    const pairs = await roundsWithMemory(ctx, 'adaptive-paging-memory', async (cache) => {
      const auto = await exportAt(ctx, service, clients, 'auto', cache);
      const floor = await pagingAt(ctx, service, clients, best.prefetch);
      return { auto, floor, repeat: await exportAt(ctx, service, clients, 'auto', cache) };
    });
    const floor = median(pairs.map((pair) => pair.floor.rowsPerSecond));
    const cpuUs = (run) => (run.cpuS * 1e6) / clients;
    for (const [measure, key] of [[`export ${count(clients)} clients at ${latencyMs} ms, no flags, a first run`, 'auto'], ['  same, a repeat from its pace memory', 'repeat']]) {
      const figure = median(pairs.map((pair) => pair[key].rowsPerSecond));
      rows.push(
        row({
          part,
          measure,
          figure: `${perSecond(figure)}, CPU ${median(pairs.map((pair) => cpuUs(pair[key]))).toFixed(0)} µs a client`,
          baseline: `${perSecond(floor)} (bare paging loop + csv-stringify, prefetch ${best.prefetch}, CPU ${median(pairs.map((pair) => cpuUs(pair.floor))).toFixed(0)} µs a client; medians of ${PAIRS} pairs)`,
          ratio: figure / floor,
          target: '≥ 0.80',
          pass: figure / floor >= 0.8,
          runs: pairs.map((pair) => pair[key]),
          data: { latencyMs, sweep, pairs, best: best.prefetch },
        }),
      );
    }
  } finally {
    await service.close();
  }
  rows.push(...(await exportCpu(ctx)));
  return rows;
}

/** bench/children/export-cpu.js: CPU a client of an export to CSV, start-up cancelled, medians of alternated runs. */
async function exportCpu(ctx) {
  const clients = ctx.smoke ? 3000 : ctx.quick ? 20_000 : 60_000;
  const runs = ctx.smoke ? 1 : 3;
  ctx.log(`  the export's CPU a client: ${count(clients)} clients less 1,000, medians of ${runs}…`);
  const result = await runNode(ctx, child('export-cpu'), [JSON.stringify({ clients, small: 1000, runs })], { timeoutMs: 600_000, label: 'export-cpu' });
  const { summary } = lastJson(result.stdout, 'export-cpu');
  return [
    row({
      part,
      measure: `the export's main thread (its event loop), CPU a client to CSV, start-up cancelled (${count(clients)} less 1,000 clients)`,
      figure: `${summary.marginalMainUs} µs`,
      baseline: '20 µs (the target)',
      ratio: summary.marginalMainUs / 20,
      target: '≤ 1.00',
      pass: summary.marginalMainUs <= 20,
      data: summary,
    }),
    row({
      part,
      measure: '  same, the whole process (GC threads, libuv, the kernel) and its start-up',
      figure: `${summary.marginalCpuUs} µs a client; start-up and 1,000 clients ${summary.startupCpuMs} ms`,
    }),
  ];
}

/** 2% 5xx and 1% 429 at random, 120 ± 80 ms: the sandbox's jitter is uniform in [0, jitterMs). */
const FLAKY = { latencyMs: 40, jitterMs: 160, failRate: 0.02, throttleRate: 0.01, seedRandom: 39 };

/** A flaky service: no flags beside a pinned --concurrency 64. */
async function flaky(ctx) {
  const rows = ctx.quick ? 1000 : 3000;
  ctx.log(`  flaky service (2% 5xx + 1% 429 at random, 120 ± 80 ms): no flags vs --concurrency 64 (${count(rows)} rows each)…`);
  const auto = await imports(ctx, { rows, sandboxOptions: FLAKY });
  const fixed = await imports(ctx, { rows, sandboxOptions: FLAKY, concurrency: 64 });
  const refused = (run) => `${(run.refusedShare * 100).toFixed(1)}% refused at random`;
  return [
    row({
      part,
      measure: `flaky service (2% 5xx + 1% 429, 120 ± 80 ms), ${count(rows)} rows, no flags (${limits(auto)})`,
      figure: `${perSecond(auto.rowsPerSecond)}, ${refused(auto)}`,
      baseline: `${perSecond(fixed.rowsPerSecond)} (--concurrency 64, ${refused(fixed)})`,
      ratio: auto.rowsPerSecond / fixed.rowsPerSecond,
      target: '≥ 0.85',
      pass: auto.rowsPerSecond / fixed.rowsPerSecond >= 0.85,
      data: { auto, fixed },
    }),
  ];
}

/** 300 ms, no limit: a first run, then a second against the same service from its pace memory. */
async function remembered(ctx) {
  const rows = ctx.quick ? 1000 : 3000;
  const cache = tempPath(ctx, `adaptive-cache-${++caches}`);
  ctx.log(`  300 ms, no flags: a first run, then a repeat from its pace memory (${count(rows)} rows each)…`);
  // Two sandboxes on one address, each with an empty store: to the client, one service.
  const firstService = await sandbox(ctx, { latencyMs: 300 });
  const port = Number(new URL(firstService.url).port);
  let first;
  try {
    first = await imports(ctx, { rows, cache, service: firstService });
  } finally {
    await firstService.close();
  }
  const again = await imports(ctx, { rows, cache, sandboxOptions: { latencyMs: 300, port } });
  return [
    row({
      part,
      measure: `300 ms, ${count(rows)} rows, no flags: a repeat from pace memory (started at ${again.limits[0].start}, ${limits(again)})`,
      figure: perSecond(again.rowsPerSecond),
      baseline: `${perSecond(first.rowsPerSecond)} (the first run: started at ${first.limits[0].start}, ${limits(first)})`,
      ratio: again.rowsPerSecond / first.rowsPerSecond,
      data: { first, again },
    }),
  ];
}


/** Rows of each whole run: the many-core table's 40,000 (--quick 4,000, --smoke 200). */
const wholeRows = (ctx) => (ctx.smoke ? 200 : ctx.quick ? 4000 : 40_000);

/** `cores`: this machine's whole runs at 0–500 ms, the floor's in flight from its cores and signing rate. */
function wholeRunsHere(ctx) {
  return wholeRunTable(ctx, thisMachine(ctx), { rows: wholeRows(ctx), part });
}

/** `many`: the same on an emulated many-core machine (BENCH_MANY_CORES, default 16). */
function wholeRunsEmulated(ctx) {
  const cores = process.env.BENCH_MANY_CORES === undefined ? undefined : Number(process.env.BENCH_MANY_CORES);
  if (cores !== undefined && !(Number.isInteger(cores) && cores >= 1)) throw new Error('BENCH_MANY_CORES must be a whole number ≥ 1');
  return wholeRunTable(ctx, emulatedMachine(cores), { rows: wholeRows(ctx), part });
}
