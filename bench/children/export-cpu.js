/**
 * The export's CPU per client: a sandbox seeded with `clients` clients in its own process
 * (serve-sandbox.js), then `ccs-bulk export` run `runs` times from each build in `dists`, the
 * builds alternated (a shared machine drifts: alternating spreads its load over both), each
 * export in its own process. CPU is user + sys of the export process (every thread: GC and
 * libuv's included), and of its main thread alone (the event loop, which sets the pace: from
 * /proc, 10 ms ticks), read at its exit; start-up is in it. With `small`, each export is paired
 * with one of `small` clients from a second sandbox, and the difference over the extra clients
 * is the marginal CPU a client, start-up cancelled. Prints one JSON line per export, then one
 * summary line per build (medians).
 *
 * argv[2] is JSON: { clients = 60000, small = 1000 (0: none), pageSize = 100, format = 'csv', runs = 3,
 *   dists = ['dist'], nodeFlags = [] }. `dists` are build folders (a copy of an older dist/ to
 * compare with; it needs node_modules beside it, a link does). serve-sandbox.js serves pages
 * of at most 100 clients (the sandbox's default), so pageSize stays ≤ 100 here.
 *
 *   node bench/children/export-cpu.js '{"runs":5,"dists":["/tmp/old/dist","dist"]}'
 */
import { fork, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const options = { clients: 60_000, small: 1000, pageSize: 100, format: 'csv', runs: 3, dists: ['dist'], nodeFlags: [], ...JSON.parse(process.argv[2] ?? '{}') };
const root = fileURLToPath(new URL('../..', import.meta.url));
const temp = mkdtempSync(join(tmpdir(), 'ccs-export-cpu-'));

// The export process reports its own figures as it exits: no wrapper process between.
const report = join(temp, 'report.cjs');
writeFileSync(
  report,
  "const t0 = process.cpuUsage();\nprocess.on('exit', () => {\n  const cpu = process.cpuUsage(t0);\n  const use = process.resourceUsage();\n" +
    "  const main = require('node:fs').readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');\n" +
    "  require('node:fs').writeSync(2, `\\nEXPORT_CPU ${JSON.stringify({ userUs: cpu.user, systemUs: cpu.system, maxRssKb: use.maxRSS, minorFaults: use.minorPageFault, mainTicks: Number(main[11]) + Number(main[12]) })}\\n`);\n});\n",
);
const publicKeyFile = join(temp, 'public.pem');
writeFileSync(publicKeyFile, generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }));

/** A sandbox of `clients` clients in its own process: its url and token, and how to close it. */
async function serve(clients) {
  const child = fork(join(root, 'bench/children/serve-sandbox.js'), [JSON.stringify({ publicKeyFile, verifySignatures: false, seed: clients })], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const [ready] = await once(child, 'message');
  return { ...ready, close: () => child.send({ type: 'close' }) };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? +((sorted[middle - 1] + sorted[middle]) / 2).toFixed(2) : sorted[Math.floor(middle)];
};

/** One export of every client of `service` from the build in `dist`: its CPU, µs (whole process, main thread), and memory. */
async function exportOnce(dist, service) {
  const out = join(temp, `out.${options.format}`);
  const args = [...options.nodeFlags, '-r', report, join(resolve(root, dist), 'bin.cjs'), 'export', '--out', out];
  args.push('--format', options.format, '--page-size', String(options.pageSize), '--overwrite', '--quiet');
  const child = spawn(process.execPath, args, {
    env: { ...process.env, CCS_BASE_URL: service.url, CCS_TOKEN: service.token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = await once(child, 'exit');
  const line = /EXPORT_CPU (.*)/.exec(stderr);
  if (code !== 0 || !line) throw new Error(`export from ${dist} failed (exit ${code}): ${stderr.slice(-2000)}`);
  const figures = JSON.parse(line[1]);
  return { cpuUs: figures.userUs + figures.systemUs, sysUs: figures.systemUs, mainUs: figures.mainTicks * 10_000, maxRssMb: Math.round(figures.maxRssKb / 1024), minorFaults: figures.minorFaults };
}

const perClient = (us) => +(us / options.clients).toFixed(2);

const large = await serve(options.clients);
const small = options.small > 0 ? await serve(options.small) : undefined;
try {
  const runs = [];
  for (let round = 0; round < options.runs; round++) {
    for (const dist of options.dists) {
      const whole = await exportOnce(dist, large);
      const run = {
        dist,
        cpuUsPerClient: perClient(whole.cpuUs),
        sysUsPerClient: perClient(whole.sysUs),
        mainUsPerClient: perClient(whole.mainUs),
        maxRssMb: whole.maxRssMb,
        minorFaults: whole.minorFaults,
      };
      if (small !== undefined) {
        // What one more client costs: the difference between the two exports, start-up cancelled.
        const few = await exportOnce(dist, small);
        const extra = options.clients - options.small;
        Object.assign(run, {
          startupCpuMs: Math.round(few.cpuUs / 1000),
          marginalCpuUs: +((whole.cpuUs - few.cpuUs) / extra).toFixed(2),
          marginalMainUs: +((whole.mainUs - few.mainUs) / extra).toFixed(2),
        });
      }
      runs.push(run);
      console.log(JSON.stringify(run));
    }
  }
  for (const dist of options.dists) {
    const mine = runs.filter((run) => run.dist === dist);
    const summary = { dist, runs: mine.length, clients: options.clients, small: options.small, pageSize: options.pageSize, format: options.format };
    for (const key of ['cpuUsPerClient', 'sysUsPerClient', 'mainUsPerClient', 'startupCpuMs', 'marginalCpuUs', 'marginalMainUs', 'maxRssMb', 'minorFaults']) {
      if (mine[0][key] !== undefined) summary[key] = median(mine.map((run) => run[key]));
    }
    console.log(JSON.stringify({ summary }));
  }
} finally {
  large.close();
  small?.close();
  rmSync(temp, { recursive: true, force: true });
}
