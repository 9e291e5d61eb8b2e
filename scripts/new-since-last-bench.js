#!/usr/bin/env node
/**
 * `--new-since-last` at scale: a sandbox seeded with N clients (default 1,000,000) in its own
 * process. With no filter, run 1 reports every client (the state then holds N ids) and run 2
 * lists all N again and reports none (a plain export of the same listing runs first, for
 * reference); with `--status approved`, run 1 reports the approved
 * clients, the sandbox approves 1,000 more (its status call), run 2 reports exactly those.
 * Each export runs under `/usr/bin/time -v` for its peak RSS. Prints clients, state size, rows, time and peak RSS
 * per run. Not part of `npm test`: `npm run build && node scripts/new-since-last-bench.js [N] [export flags]`
 * (flags such as `--prefetch 16` are added to every export).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../dist/bin.cjs', import.meta.url));
const N = Number(process.argv[2] ?? 1_000_000);
/** Flags added to every export, e.g. `--prefetch 16` to compare runs at the same pages in flight. */
const EXTRA = process.argv.slice(3);
const CHANGED = 1000;

function startSandbox() {
  const child = spawn(process.execPath, ['--max-old-space-size=8192', BIN, 'sandbox', '--port', '0', '--seed', String(N), '--max-page-size', '1000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      const url = /listening on (\S+)/.exec(text)?.[1];
      const token = /token:\s+(\S+)/.exec(text)?.[1];
      if (url && token) resolve({ child, url, token });
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited ${code}`)));
  });
}

/** One export under /usr/bin/time -v: its JSON summary, wall time and peak RSS. */
function timedExport(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-v', process.execPath, BIN, 'export', ...args, ...EXTRA, '--json', '--quiet'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`export exited ${code}: ${stderr.slice(-2000)}`));
      const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1]);
      const cpu = ['User', 'System'].reduce((sum, kind) => sum + Number(new RegExp(`${kind} time \\(seconds\\): (\\S+)`).exec(stderr)?.[1]), 0);
      const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)/.exec(stderr)?.[1];
      resolve({ summary: JSON.parse(stdout), rssMb: Math.round(rssKb / 1024), wall, cpu: cpu.toFixed(1) });
    });
  });
}

async function post(sandbox, path, body) {
  const reply = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!reply.ok) throw new Error(`${path}: ${reply.status}`);
  return reply.json();
}

async function listIds(sandbox, status, count) {
  const reply = await fetch(`${sandbox.url}/v1/clients?status=${status}&size=1000&page=0`, {
    headers: { authorization: `Bearer ${sandbox.token}` },
  });
  return (await reply.json()).data.clients.slice(0, count).map((client) => client.id);
}

const dir = await mkdtemp(join(tmpdir(), 'nsl-bench-'));
const started = Date.now();
const sandbox = await startSandbox();
console.log(`sandbox: ${N} clients seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
const env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
const state = join(dir, 'all.state');
const base = ['--new-since-last', state, '--page-size', '1000', '--columns', 'id,status,created_at'];
try {
  const rows = [];
  // The reference: the same listing as a plain export (no state), whose memory run 1 should match.
  const plain = await timedExport(['--page-size', '1000', '--columns', 'id,status,created_at', '--out', join(dir, 'plain.csv.gz')], env);
  rows.push(['plain export (no state)', plain]);
  const first = await timedExport([...base, '--out', join(dir, 'run1.csv.gz')], env);
  rows.push(['run 1 (every client)', first]);
  // Changes between the runs: 1,000 clients enter `approved`, 1,000 new ones arrive.
  for (const id of await listIds(sandbox, 'pending_review', CHANGED)) await post(sandbox, `/_sandbox/clients/${id}/status`, { status: 'approved' });
  const second = await timedExport([...base, '--out', join(dir, 'run2.csv.gz')], env);
  rows.push(['run 2 (no change: 0 new)', second]);
  const approvedState = join(dir, 'approved.state');
  const approved = ['--new-since-last', approvedState, '--status', 'approved', '--page-size', '1000', '--columns', 'id'];
  const third = await timedExport([...approved, '--out', join(dir, 'approved1.csv.gz')], env);
  rows.push(['approved, run 1', third]);
  const entering = await listIds(sandbox, 'document_review', CHANGED);
  for (const id of entering) await post(sandbox, `/_sandbox/clients/${id}/status`, { status: 'approved' });
  const fourth = await timedExport([...approved, '--out', join(dir, 'approved2.csv.gz')], env);
  rows.push([`approved, run 2 (${entering.length} approved since)`, fourth]);
  console.log(`flags added to every export: ${EXTRA.join(' ') || 'none'}`);
  console.log('| run | clients listed | rows written | state ids | state file | prefetch (settled, max) | wall | CPU s | peak RSS |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [name, run] of rows) {
    const inc = run.summary.incremental;
    const listed = run.summary.account.received;
    const state = inc ? `${inc.reported} | ${(inc.stateBytes / 1e6).toFixed(2)} MB` : '— | —';
    const { mode, settled, max } = run.summary.prefetch;
    console.log(`| ${name} | ${listed} | ${run.summary.rows} | ${state} | ${mode === 'auto' ? `auto: ${settled}, ${max}` : settled} | ${run.wall} | ${run.cpu} | ${run.rssMb} MB |`);
  }
  console.log(`state files: ${(await stat(state)).size} and ${(await stat(approvedState)).size} bytes; header line: ${(await readFile(state)).subarray(0, 200).toString('latin1').split('\n')[1]}`);
} finally {
  sandbox.child.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
}
