#!/usr/bin/env node
// Outage stress: the incident of a run that exited 0 with rows never sent. Each run imports
// 3,000 rows with default flags against a sandbox with 5 ms latency; once the sandbox has
// received its 1,000th Create Client it answers 503 to everything for --outage seconds. Two
// CPU-burning processes run beside it (a timer may then fire just before its time).
// Every run must exit 0 with every row created (or, if it stops, exit 3 — never 0 short).
// Usage: npm run stress:outage -- [--runs 20] [--rows 3000] [--outage 25] [--at 1000] [--burners 2]
// Prints one line per run and a total; exit 0 when no run was incomplete.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startSandbox } from '../dist/index.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    rows: { type: 'string', default: '3000' },
    outage: { type: 'string', default: '25' },
    at: { type: 'string', default: '1000' },
    burners: { type: 'string', default: '2' },
  },
});
const RUNS = Number(args.runs);
const ROWS = Number(args.rows);
const OUTAGE_S = Number(args.outage);
const AT = Number(args.at);
const BURNERS = Number(args.burners);
if (![RUNS, ROWS, AT, BURNERS].every(Number.isInteger) || RUNS < 1 || ROWS <= AT || !(OUTAGE_S > 0)) {
  console.error('usage: outage-stress.js [--runs N] [--rows N] [--outage SECONDS] [--at N<rows] [--burners N]');
  process.exit(2);
}
const BIN = new URL('../dist/bin.cjs', import.meta.url).pathname;
// Far above a run's length under load; a run past it is killed and counted incomplete.
const RUN_BOUND_MS = 30 * 60_000;

function csv(rows, offset) {
  const lines = ['name,email,country,address,currency,application_date'];
  for (let i = 1; i <= rows; i++) {
    const n = offset + i;
    lines.push(`Client ${n},client${n}@example.com,DE,Street ${n},EUR,2024-05-17`);
  }
  return `${lines.join('\n')}\n`;
}

const burning = new Set();
function burn() {
  const burner = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
  burning.add(burner);
  burner.on('exit', () => burning.delete(burner));
  return burner;
}
// Stopped by hand: the burners (and the import) must not outlive the script.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const burner of burning) burner.kill('SIGKILL');
    process.exit(130);
  });
}

/** Resolves when the sandbox has received `count` Create Clients (checked on every request). */
function afterCreates(sandbox, count) {
  return new Promise((resolve) => {
    const look = () => {
      if (sandbox.stats.creates >= count) resolve();
      else setTimeout(look, 1);
    };
    look();
  });
}

async function oneRun(run, dir) {
  const sandbox = await startSandbox({ latencyMs: 5 });
  const file = join(dir, `run-${run}.csv`);
  writeFileSync(file, csv(ROWS, run * 1_000_000));
  const key = join(dir, 'private.pem');
  writeFileSync(key, sandbox.privateKeyPem, { mode: 0o600 });
  const burners = Array.from({ length: BURNERS }, burn);
  const load = loadavg()[0];
  const env = { ...process.env, CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token, CCS_SIGNING_KEY_FILE: key };
  const child = spawn(process.execPath, [BIN, 'import', file, '--overwrite'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  burning.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const bound = setTimeout(() => child.kill('SIGKILL'), RUN_BOUND_MS);
  const outage = afterCreates(sandbox, AT).then(() =>
    sandbox.setFaults({ outage: { atMs: 0, forMs: OUTAGE_S * 1000, kind: '503' } }),
  );
  const { code, signal } = await exited;
  clearTimeout(bound);
  for (const burner of burners) burner.kill('SIGKILL');
  await Promise.race([outage, Promise.resolve()]);
  const created = sandbox.store.size;
  await sandbox.close();
  const last = stderr.trim().split('\n').at(-1) ?? '';
  // The incident: exit 0 with rows never sent. Any other exit is not expected here either.
  const incomplete = code === 0 && created !== ROWS;
  const failed = code !== 0;
  return { run, code: code ?? signal, created, load, outageRequests: sandbox.stats.faults.outage, incomplete, failed, last };
}

const dir = mkdtempSync(join(tmpdir(), 'ccs-bulk-outage-stress-'));
const results = [];
try {
  console.log(`outage stress: ${RUNS} runs × ${ROWS} rows, 5 ms latency, 503 for ${OUTAGE_S} s after the ${AT}th create, ${BURNERS} CPU burners`);
  for (let run = 1; run <= RUNS; run++) {
    const started = Date.now();
    const result = await oneRun(run, dir);
    results.push(result);
    console.log(
      `run ${String(run).padStart(2)}: exit ${result.code}, created ${result.created}/${ROWS}, ` +
        `503s ${result.outageRequests}, load ${result.load.toFixed(2)}, ${((Date.now() - started) / 1000).toFixed(0)} s` +
        (result.incomplete ? '  INCOMPLETE (exit 0, rows never sent)' : '') +
        (result.incomplete || result.failed ? `  last stderr line: ${result.last}` : ''),
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const incomplete = results.filter((r) => r.incomplete).length;
const failed = results.filter((r) => r.failed).length;
const exits = {};
for (const r of results) exits[r.code] = (exits[r.code] ?? 0) + 1;
const loads = results.map((r) => r.load);
console.log(
  `runs ${results.length}, incomplete exits (0 with rows missing) ${incomplete}, other non-zero exits ${failed}, exits ${JSON.stringify(exits)}, ` +
    `created min ${Math.min(...results.map((r) => r.created))} max ${Math.max(...results.map((r) => r.created))}, ` +
    `load (1 min) ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`,
);
process.exit(incomplete + failed === 0 ? 0 : 1);
