/**
 * Import runs: ccs-bulk's real CLI, the signed bare loop (the floor), and their unsigned
 * equivalents, each in its own process against a fresh sandbox process.
 */
import { rmSync } from 'node:fs';
import { bodies, dataset } from './make-inputs.js';
import {
  BIN,
  cached,
  child,
  foreignCores,
  lastJson,
  outcome,
  runNode,
  sandbox,
  sandboxCpu,
  tempPath,
  timeoutFor,
  withSandbox,
} from './run-child.js';

/**
 * `ccs-bulk import` of the first `rows` rows into a fresh sandbox (signatures verified).
 * With `replayCheck`, that many floor bodies are then posted to the same sandbox: all must
 * replay (200), none conflict (409). The sandbox compares content, so this proves the floor
 * sends the importer's bodies and keys; the field order is the importer's too (data.js).
 */
export function importRun(ctx, { rows, concurrency, latencyMs = 0, replayCheck = 0 }) {
  return cached(ctx, `import:${rows}:${concurrency}:${latencyMs}`, async () => {
    const csv = await dataset(ctx, rows);
    const service = await sandbox(ctx, { latencyMs });
    const results = tempPath(ctx, 'import.results.csv');
    try {
      ctx.log(`  import ${rows} rows, C=${concurrency}${latencyMs ? `, ${latencyMs} ms latency` : ''}…`);
      const before = await service.stats();
      const args = ['import', csv, '--results', results, '--quiet', '--json', '--concurrency', concurrency];
      const result = await runNode(ctx, BIN, args.map(String), {
        env: {
          CCS_BASE_URL: service.url,
          CCS_TOKEN: service.token,
          CCS_SIGNING_KEY_FILE: ctx.keys.privateKeyFile,
        },
        timeoutMs: timeoutFor(rows, 50),
        label: 'ccs-bulk import',
        tool: true,
      });
      const summary = lastJson(result.stdout, 'ccs-bulk import');
      if (summary.counts.created !== rows) {
        throw new Error(`ccs-bulk import: ${summary.counts.created} of ${rows} created`);
      }
      const served = await sandboxCpu(service, before);
      const run = { ...outcome(result, summary, rows, served.cpuS), sandbox: served };
      if (replayCheck > 0) {
        const check = await postBodies(ctx, service, { rows: replayCheck, concurrency: 1 });
        run.replayCheck = check.statuses;
      }
      ctx.log(`    ${Math.round(run.rowsPerSecond)} rows/s, peak RSS ${run.maxRssMb?.toFixed(0)} MB`);
      return run;
    } finally {
      await service.close();
      rmSync(results, { force: true });
    }
  });
}

async function postBodies(ctx, service, { rows, concurrency, unsigned = false }) {
  const options = {
    unsigned,
    url: service.url,
    token: service.token,
    bodiesFile: await bodies(ctx, Math.max(rows, ctx.sizes.importRows)),
    privateKeyFile: ctx.keys.privateKeyFile,
    concurrency,
    rows,
    timeoutMs: timeoutFor(rows, 50),
  };
  const result = await runNode(ctx, child('post-bodies'), [JSON.stringify(options)], {
    timeoutMs: options.timeoutMs + 10_000,
    label: 'signed undici loop',
  });
  return { ...lastJson(result.stdout, 'signed undici loop'), ...result, stdout: undefined, stderr: undefined };
}

/** The floor: the same bodies, signed with the same signer, bare undici Pool, fresh sandbox. */
export function floorRun(ctx, { rows, concurrency, latencyMs = 0, round = 0 }) {
  return cached(ctx, `floor:${rows}:${concurrency}:${latencyMs}:${round}`, async () => {
    await bodies(ctx, Math.max(rows, ctx.sizes.importRows));
    const service = await sandbox(ctx, { latencyMs });
    try {
      ctx.log(`  floor: sign + POST ${rows} bodies, C=${concurrency}${latencyMs ? `, ${latencyMs} ms` : ''}…`);
      const before = await service.stats();
      const posted = await postBodies(ctx, service, { rows, concurrency });
      if (posted.statuses['200'] !== rows) throw new Error(`floor: statuses ${JSON.stringify(posted.statuses)}`);
      const served = await sandboxCpu(service, before);
      const run = {
        rows,
        rowsPerSecond: posted.rowsPerSecond,
        elapsedS: posted.elapsedS,
        loopCpuS: posted.loopCpuS,
        wallS: posted.wallS,
        cpuS: posted.cpuS,
        maxRssMb: posted.maxRssMb,
        foreignCores: foreignCores(posted, served.cpuS),
        sandbox: served,
      };
      ctx.log(`    ${Math.round(run.rowsPerSecond)} rows/s`);
      return run;
    } finally {
      await service.close();
    }
  });
}

/**
 * The import between two halves of its floor (A/2 B A/2): the machine's speed drifts by ±10%
 * over minutes, and linear drift cancels out of the ratio.
 */
export async function importBetweenFloors(ctx, { rows, concurrency, latencyMs = 0, replayCheck = 0 }) {
  const half = Math.ceil(rows / 2);
  const before = await floorRun(ctx, { rows: half, concurrency, latencyMs, round: 1 });
  const imported = await importRun(ctx, { rows, concurrency, latencyMs, replayCheck });
  const after = await floorRun(ctx, { rows: half, concurrency, latencyMs, round: 2 });
  const floor = {
    rows: half * 2,
    rowsPerSecond: (half * 2) / (before.elapsedS + after.elapsedS),
    halves: [before, after],
    foreignCores: Math.max(before.foreignCores ?? 0, after.foreignCores ?? 0),
  };
  return { imported, floor };
}

/**
 * The unsigned equivalents, each against a fresh sandbox that does not verify: the import
 * pipeline through the library with a constant signer, and the bare undici loop unsigned.
 * Their CPU per row is what each costs besides the signature. With `rounds` > 1 the two run
 * alternately that many times and the run with the median CPU per row of each is kept: a
 * difference of tens of µs per row is within one run's noise on a shared machine.
 * Each run also reports its second half apart (`steady`: from half the rows done to the
 * end, children/halfway.js); `steadyCpuUs` is the median of those CPU figures per row.
 */
export function unsignedRuns(ctx, { rows, concurrency, latencyMs = 0, rounds = 1 }) {
  return cached(ctx, `unsigned:${rows}:${concurrency}:${latencyMs}:${rounds}`, async () => {
    const bares = [];
    const pipelines = [];
    for (let round = 1; round <= rounds; round++) {
      const { bare, pipeline } = await unsignedPair(ctx, { rows, concurrency, latencyMs, round, rounds });
      bares.push(bare);
      pipelines.push(pipeline);
    }
    return {
      bare: { ...median(bares), steadyCpuUs: medianOf(bares.map(steadyCpuUs)) },
      pipeline: { ...median(pipelines), steadyCpuUs: medianOf(pipelines.map(steadyCpuUs)) },
      rounds,
    };
  });
}

const cpuPerRow = (run) => run.cpuS / run.rows;
const steadyCpuUs = (run) => (run.steady.cpuS / run.steady.rows) * 1e6;
const medianOf = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

function median(runs) {
  const sorted = [...runs].sort((a, b) => cpuPerRow(a) - cpuPerRow(b));
  const middle = sorted[Math.floor((sorted.length - 1) / 2)];
  return { ...middle, cpuPerRowUs: sorted.map((run) => Math.round(cpuPerRow(run) * 1e6)) };
}

async function unsignedPair(ctx, { rows, concurrency, latencyMs, round, rounds }) {
  const file = await dataset(ctx, rows);
  const at = `${rows} rows, C=${concurrency}${latencyMs ? `, ${latencyMs} ms` : ''}${rounds > 1 ? `, round ${round} of ${rounds}` : ''}`;
  const bare = await withSandbox(ctx, { verifySignatures: false, latencyMs }, async (service) => {
    ctx.log(`  unsigned bare undici loop, ${at}…`);
    const run = await postBodies(ctx, service, { rows, concurrency, unsigned: true });
    if (run.statuses['200'] !== rows) throw new Error(`unsigned loop: ${JSON.stringify(run.statuses)}`);
    return { result: run, summary: { rows, rowsPerSecond: run.rowsPerSecond, cpuS: run.loopCpuS, steady: run.steady } };
  });
  const pipeline = await withSandbox(ctx, { verifySignatures: false, latencyMs }, async (service) => {
    ctx.log(`  unsigned import pipeline (library, constant signer), ${at}…`);
    const results = tempPath(ctx, 'unsigned.results.csv');
    const options = { url: service.url, token: service.token, file, results, concurrency, rows };
    const result = await runNode(ctx, child('import-unsigned'), [JSON.stringify(options)], {
      timeoutMs: timeoutFor(rows, 200),
      label: 'unsigned import',
      tool: true,
    });
    rmSync(results, { force: true });
    const summary = lastJson(result.stdout, 'unsigned import');
    if (summary.created !== rows) throw new Error(`unsigned import: ${summary.created} of ${rows} created`);
    if (summary.steady === undefined) throw new Error('unsigned import: no second half measured');
    return { result, summary };
  });
  return { bare, pipeline };
}
