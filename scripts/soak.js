#!/usr/bin/env node
// Soak: repeated imports of 20,000 rows against the sandbox under a seeded random schedule of
// 5xx, 429, connections cut after the client was created, latency spikes and outages, with the
// CLI killed (-9) at random moments and resumed until done. After each import: the sandbox
// holds exactly one client per valid row and the results file accounts for every row once.
// Usage: npm run test:soak -- [--minutes 10] [--rows 20000] [--seed 1] [--phase-seconds 2:6] [--kill-first] [--key-file PEM] [--json]
// --kill-first: each import's CLI is first killed as soon as its results file holds a row
// outcome (polled every 10 ms, so mid-run unless the whole import takes less), before the
// random kills. --key-file: sign
// with this RSA private key (PEM) instead of a pair the sandbox makes (seconds of CPU).
// Outages: a TCP relay in front of the sandbox drops every connection while "down" (the
// sandbox has no outage switch of its own). Exit 0 when every check held, 1 otherwise.
import { spawn } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse/sync';
import { startSandbox } from '../dist/index.js';
import { createRandom } from '../dist/sandbox/random.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rows: { type: 'string', default: '20000' },
    seed: { type: 'string', default: '1' },
    'phase-seconds': { type: 'string', default: '2:6' },
    'kill-first': { type: 'boolean', default: false },
    'key-file': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const MINUTES = Number(args.minutes);
const ROWS = Number(args.rows);
const SEED = Number(args.seed);
const PHASE_MS = args['phase-seconds'].split(':').map((part) => Number(part) * 1000);
if (!(MINUTES > 0) || !Number.isInteger(ROWS) || ROWS < 10 || !(PHASE_MS.length === 2 && PHASE_MS[0] > 0 && PHASE_MS[1] >= PHASE_MS[0])) {
  console.error('usage: soak.js [--minutes N>0] [--rows N>=10] [--seed N] [--phase-seconds LOW:HIGH] [--kill-first] [--key-file PEM] [--json]');
  process.exit(2);
}
const BIN = new URL('../dist/bin.cjs', import.meta.url).pathname;
const MAX_ATTEMPTS = 60;
const MAX_KILLS_PER_RUN = 4;
/** A kill lands anywhere in the first part of a run (0.75 ms per row, 1–20 s). */
const KILL_WINDOW_MS = Math.min(20_000, Math.max(1_000, ROWS * 0.75));

// The sandbox's seeded PRNG: the whole schedule (faults, kills, bad rows) follows from --seed.
const random = createRandom(SEED);
const between = (low, high) => low + random() * (high - low);

const temp = mkdtempSync(join(tmpdir(), 'ccs-bulk-soak-'));
const givenKey = args['key-file'] === undefined ? undefined : readFileSync(args['key-file'], 'utf8');
const sandbox = await startSandbox({
  seedRandom: SEED,
  retryAfterSeconds: 1,
  publicKeyPem: givenKey === undefined ? undefined : createPublicKey(givenKey).export({ type: 'spki', format: 'pem' }),
});
const keyFile = join(temp, 'private.pem');
writeFileSync(keyFile, givenKey ?? sandbox.privateKeyPem, { mode: 0o600 });
const relay = await startRelay(Number(new URL(sandbox.url).port));
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CCS_'))),
  CCS_BASE_URL: `http://127.0.0.1:${relay.port}`,
  CCS_TOKEN: sandbox.token,
  CCS_SIGNING_KEY_FILE: keyFile,
};

const totals = {
  seed: SEED,
  minutes: MINUTES,
  rowsPerRun: ROWS,
  runs: 0,
  attempts: 0,
  kills: 0,
  /** Kills after which the results file held some rows' outcomes but not all: mid-import. */
  killsMidRun: 0,
  rows: 0,
  validRows: 0,
  duplicates: 0,
  losses: 0,
  accountingErrors: 0,
  unfinishedRuns: 0,
  phases: { calm: 0, server_errors: 0, throttling: 0, cuts: 0, latency: 0, outage: 0 },
  faults: { http5xx: 0, http429: 0, cutAfterCreate: 0, dropped: 0, outageSeconds: 0, outageConnectionsRefused: 0 },
};

const deadline = Date.now() + MINUTES * 60_000;
const schedule = startSchedule();
try {
  while (Date.now() < deadline) await soakOnce(totals.runs + 1);
} finally {
  schedule.stop();
  relay.close();
  const stats = sandbox.stats.faults;
  Object.assign(totals.faults, {
    http5xx: stats.fail,
    http429: stats.throttle + stats.rateLimited,
    cutAfterCreate: stats.reset,
    dropped: stats.drop,
  });
  totals.faults.outageSeconds = Math.round(totals.faults.outageSeconds);
  await sandbox.close();
  rmSync(temp, { recursive: true, force: true });
}
const ok = totals.duplicates === 0 && totals.losses === 0 && totals.accountingErrors === 0 && totals.unfinishedRuns === 0;
if (args.json) console.log(JSON.stringify({ ok, ...totals }));
else {
  console.log(
    `soak ${ok ? 'passed' : 'FAILED'}: ${totals.runs} runs × ${ROWS} rows (${totals.validRows} valid rows in all), ` +
      `${totals.attempts} CLI runs, ${totals.kills} kill -9 (${totals.killsMidRun} mid-import), duplicates ${totals.duplicates}, losses ${totals.losses}, ` +
      `accounting errors ${totals.accountingErrors}, unfinished runs ${totals.unfinishedRuns}\n` +
      `  fault phases: ${JSON.stringify(totals.phases)}\n  faults injected: ${JSON.stringify(totals.faults)}`,
  );
}
process.exit(ok ? 0 : 1);

/** One import of ROWS rows, killed and resumed until it reports every row done, then checked. */
async function soakOnce(run) {
  const dir = join(temp, `run-${run}`);
  const input = `${dir}.csv`;
  const results = `${dir}.results.csv`;
  const expected = writeInput(input, run);
  let kills = 0;
  let done = false;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS && !done; attempt++) {
    totals.attempts++;
    const killFirst = args['kill-first'] && kills === 0;
    const killAfter = !killFirst && kills < MAX_KILLS_PER_RUN && random() < 0.5 ? between(300, KILL_WINDOW_MS) : undefined;
    const outcome = await runCli(['import', input, '--results', results, '--resume', '--quiet', '--json', '--retries', '3'], killAfter, killFirst ? results : undefined);
    if (outcome.killed) {
      kills++;
      totals.kills++;
      const recorded = rowsRecorded(results);
      if (recorded > 0 && recorded < ROWS) totals.killsMidRun++;
      continue;
    }
    const summary = lastJson(outcome.stdout);
    // Done when nothing is left to send: failed or not attempted rows are sent again by --resume.
    // A run that failed before it had a summary prints a failure object without counts: not done.
    done = summary?.counts !== undefined && summary.stopped === undefined && summary.counts.failed === 0 && summary.counts.not_attempted === 0;
  }
  totals.runs++;
  totals.rows += ROWS;
  totals.validRows += expected.valid.size;
  if (!done) {
    totals.unfinishedRuns++;
    console.error(`run ${run}: not done after ${MAX_ATTEMPTS} attempts`);
  }
  check(run, results, expected);
  if (!args.json) {
    console.error(
      `run ${run}: ${ROWS} rows, ${kills} kills; so far ${totals.attempts} CLI runs, duplicates ${totals.duplicates}, losses ${totals.losses}`,
    );
  }
}

/** The input: unique rows by e-mail, ~1% invalid, ~0.5% repeating an earlier row. */
function writeInput(path, run) {
  const valid = new Set();
  const lines = ['name,email,country,address,currency,application_date'];
  const rows = [];
  for (let n = 1; n <= ROWS; n++) {
    const pick = random();
    if (pick < 0.01) {
      rows.push({ kind: 'invalid', cells: [`Bad ${run}-${n}`, 'not-an-email', 'DE', `Street ${n}`, 'EUR', '2024-05-17'] });
    } else if (pick < 0.015 && rows.some((row) => row.kind === 'valid')) {
      const earlier = rows.find((row) => row.kind === 'valid');
      rows.push({ kind: 'duplicate', cells: earlier.cells });
    } else {
      const email = `soak-${SEED}-${run}-${n}@example.com`;
      valid.add(email);
      rows.push({ kind: 'valid', cells: [`Soak ${run}-${n}`, email, n % 2 ? 'DE' : 'FR', `"Street ${n}\nTown ${run}"`, 'EUR', '2024-05-17'] });
    }
  }
  for (const row of rows) lines.push(row.cells.join(','));
  writeFileSync(path, `${lines.join('\n')}\n`);
  return { valid, kinds: rows.map((row) => row.kind) };
}

/** One client per valid row in the sandbox; one line per row in the results file, as expected. */
function check(run, results, expected) {
  const prefix = `soak-${SEED}-${run}-`;
  const clients = new Map();
  for (const client of sandbox.store.all()) {
    if (!client.email?.startsWith(prefix)) continue;
    clients.set(client.email, [...(clients.get(client.email) ?? []), client.id]);
  }
  for (const [email, ids] of clients) {
    if (ids.length > 1) totals.duplicates += ids.length - 1;
    if (!expected.valid.has(email)) totals.accountingErrors++;
  }
  for (const email of expected.valid) if (!clients.has(email)) totals.losses++;

  const lines = parse(readFileSync(results), { relax_column_count: true }).slice(1);
  const seen = new Map();
  for (const line of lines) seen.set(Number(line[0]), (seen.get(Number(line[0])) ?? 0) + 1);
  let problems = 0;
  expected.kinds.forEach((kind, index) => {
    if (seen.get(index + 1) !== 1) problems++;
  });
  for (const line of lines) {
    const kind = expected.kinds[Number(line[0]) - 1];
    const want = kind === 'valid' ? 'created' : kind;
    if (line[1] !== want) problems++;
    if (line[1] === 'created' && clients.get(line[12])?.[0] !== line[2]) problems++;
  }
  if (lines.length !== ROWS) problems++;
  if (problems > 0) console.error(`run ${run}: ${problems} results-file problems`);
  totals.accountingErrors += problems;
}

/** Row outcomes in a results file so far (its lines but the header; a row's cell may hold a newline). */
function rowsRecorded(path) {
  try {
    return Math.max(0, parse(readFileSync(path), { relax_column_count: true }).length - 1);
  } catch {
    return 0;
  }
}

/** The CLI, killed -9 after `killAfterMs`, or once `killOnRowsIn` (a results file) holds a row. */
function runCli(cliArgs, killAfterMs, killOnRowsIn) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...cliArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    const watch =
      killOnRowsIn === undefined
        ? undefined
        : setInterval(() => {
            if (rowsRecorded(killOnRowsIn) > 0) child.kill('SIGKILL');
          }, 10);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(watch);
      if (code !== null && code !== 0 && code !== 1 && code !== 3 && !/stopped/.test(stderr)) {
        console.error(`ccs-bulk exited ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
      }
      resolve({ killed: signal === 'SIGKILL', code, stdout, stderr });
    });
  });
}

function lastJson(text) {
  const line = text.trim().split('\n').at(-1);
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * Every 2–6 s (--phase-seconds) a new phase: calm, 5xx, 429, cuts after create, a latency spike,
 * or an outage; dealt from a shuffled deck of the six, so every six phases hold each kind once.
 */
function startSchedule() {
  let timer;
  const calm = { failRate: 0, throttleRate: 0, resetRate: 0, latencyMs: 0, jitterMs: 5 };
  let deck = [];
  const next = () => {
    relay.up();
    if (deck.length === 0) {
      deck = Object.keys(totals.phases);
      for (let i = deck.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [deck[i], deck[j]] = [deck[j], deck[i]];
      }
    }
    const kind = deck.pop();
    totals.phases[kind]++;
    const phase = { ...calm };
    if (kind === 'server_errors') phase.failRate = between(0.05, 0.3);
    if (kind === 'throttling') phase.throttleRate = between(0.05, 0.3);
    if (kind === 'cuts') phase.resetRate = between(0.02, 0.2);
    if (kind === 'latency') Object.assign(phase, { latencyMs: Math.round(between(200, 1500)), jitterMs: 300 });
    const lengthMs = between(PHASE_MS[0], PHASE_MS[1]);
    if (kind === 'outage') {
      relay.down();
      totals.faults.outageSeconds += lengthMs / 1000;
    }
    sandbox.setFaults(phase);
    timer = setTimeout(next, lengthMs);
  };
  next();
  return {
    stop() {
      clearTimeout(timer);
      relay.up();
      sandbox.setFaults(calm);
    },
  };
}

/** A TCP relay to the sandbox that, while down, cuts every connection and refuses new ones. */
function startRelay(target) {
  const sockets = new Set();
  let isDown = false;
  const server = net.createServer((socket) => {
    if (isDown) {
      totals.faults.outageConnectionsRefused++;
      socket.destroy();
      return;
    }
    const upstream = net.connect(target, '127.0.0.1');
    const pair = [socket, upstream];
    for (const end of pair) {
      sockets.add(end);
      end.on('error', () => pair.forEach((s) => s.destroy()));
      end.on('close', () => {
        sockets.delete(end);
        pair.forEach((s) => s.destroy());
      });
    }
    socket.pipe(upstream);
    upstream.pipe(socket);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        down() {
          isDown = true;
          for (const socket of sockets) socket.destroy();
        },
        up() {
          isDown = false;
        },
        close() {
          for (const socket of sockets) socket.destroy();
          server.close();
        },
      }),
    ),
  );
}
