// ccs-bulk performance suite: every figure beside its floor, measured in one sitting.
// Run: npm run bench  (builds dist/ first), or node bench/run.js [options] after a build.
// See `node bench/run.js --help`. Writes bench/results.json. Needs a built dist/.
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateRsaKeyPair } from '../dist/index.js';
import { killAll } from './lib/processes.js';
import { errorRow, formatTable } from './lib/report.js';
import { writeBenchDocs } from './readme.js';
import * as adaptive from './parts/adaptive.js';
import * as alternatives from './parts/alternatives.js';
import * as exportPart from './parts/export.js';
import * as importFloor from './parts/import-floor.js';
import * as latency from './parts/latency.js';
import * as memory from './parts/memory.js';
import * as signing from './parts/signing.js';
import * as validate from './parts/validate.js';

const PARTS = [signing, importFloor, latency, adaptive, validate, exportPart, memory, alternatives];
const NEEDS_SIGNING = new Set(['import', 'adaptive']);
const DEFAULT_OUT = fileURLToPath(new URL('results.json', import.meta.url));

const HELP = `Usage: node bench/run.js [options]   (npm run bench builds dist/ first)

  --rows N              rows for part 1, import vs signing floor (default 20000; --quick 2000; --smoke 100);
                        the memory part imports N and 5×N
  --quick               small sizes for a smoke run (1–3 minutes)
  --smoke               the smallest sizes, one unsigned round: the machinery runs, the figures
                        mean nothing (the test suite's run; --rows still sizes part 1)
  --key-file FILE       sign with this RSA-4096 private key (PEM) instead of a fresh pair
  --only NAME[,NAME]    run some parts: ${PARTS.map((part) => part.name).join(', ')}
                        (BENCH_ADAPTIVE=limit,floor,distance,step,shards,export,noise,memory: some of
                        adaptive's pieces; cores and many run only when named: whole runs of 40,000
                        rows at 0–500 ms on this machine, and on an emulated many-core one,
                        BENCH_MANY_CORES=N signing threads, default 16)
  --concurrency N       import and floor concurrency for parts 1, 5, 6 (default 8, the CLI's)
  --with-alternatives   also run newman, if \`npx --no-install newman\` works (not a dependency)
  --retry-contended N   measure again, up to N times, a run during which other processes kept
                        more than 0.25 cores busy; keep the least contended (default 0)
  --cpu-prof DIR        run every ccs-bulk child under node --cpu-prof into DIR (slows it)
  --out FILE            results JSON (default bench/results.json; a full run there also updates
                        the tables in bench/README.md and README.md: npm run bench:readme)
`;

function options() {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string' },
      quick: { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
      'key-file': { type: 'string' },
      only: { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      'with-alternatives': { type: 'boolean', default: false },
      'retry-contended': { type: 'string', default: '0' },
      'cpu-prof': { type: 'string' },
      out: { type: 'string', default: DEFAULT_OUT },
      help: { type: 'boolean', default: false },
    },
  });
  const whole = (flag, text, least = 1) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < least) throw new Error(`${flag} must be a whole number ≥ ${least}`);
    return value;
  };
  const names = values.only?.split(',').map((item) => item.trim()) ?? PARTS.map((part) => part.name);
  const unknown = names.filter((item) => !PARTS.some((part) => part.name === item));
  if (unknown.length > 0) throw new Error(`--only: unknown part ${unknown.join(', ')}`);
  return {
    help: values.help,
    // --smoke is --quick made smaller still.
    quick: values.quick || values.smoke,
    smoke: values.smoke,
    keyFile: values['key-file'],
    // Two at least: the second half of a run is measured apart.
    rows: values.rows === undefined ? undefined : whole('--rows', values.rows, 2),
    only: names,
    concurrency: whole('--concurrency', values.concurrency),
    withAlternatives: values['with-alternatives'],
    retryContended: values['retry-contended'] === '0' ? 0 : whole('--retry-contended', values['retry-contended']),
    cpuProfDir: values['cpu-prof'],
    out: values.out,
  };
}

/** Sizes per part: the issue's, or small ones for a smoke run. */
function sizes(opts) {
  const importRows = opts.rows ?? (opts.smoke ? 100 : opts.quick ? 2000 : 20_000);
  const validateRows = opts.smoke ? 10_000 : opts.quick ? 100_000 : 1_000_000;
  const exportClients = opts.smoke ? 1000 : opts.quick ? 10_000 : 100_000;
  return {
    importRows,
    // Seconds per signing measurement (four of them); rounds of the unsigned pair (medians).
    signingSeconds: opts.smoke ? 0.1 : opts.quick ? 0.5 : 1,
    unsignedRounds: opts.smoke ? 1 : 3,
    latencyRows: opts.quick ? 600 : 2500,
    validateRows,
    // Alternating rounds of the bare parse, the CSV and the .xlsx validate (medians).
    validateRounds: opts.smoke ? 1 : 3,
    exportClients,
    alternativeRows: opts.quick ? 500 : 2000,
    memory: {
      validate: [validateRows / 10, validateRows],
      import: [importRows, importRows * 5],
      export: [exportClients / 10, exportClients],
    },
  };
}

async function setUp(opts) {
  const tmp = mkdtempSync(join(tmpdir(), 'ccs-bench-'));
  const cleanUp = () => {
    killAll();
    rmSync(tmp, { recursive: true, force: true });
  };
  process.on('exit', cleanUp);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}: stopping every process it started\n`);
      cleanUp();
      process.exit(130);
    });
  }
  // One key pair for the whole run: the sandboxes verify with it, ccs-bulk and the floor sign with it.
  const { privateKeyPem, publicKeyPem } =
    opts.keyFile === undefined ? await generateRsaKeyPair() : keyPairOf(readFileSync(opts.keyFile, 'utf8'));
  const keys = {
    privateKeyPem,
    privateKeyFile: join(tmp, 'private.pem'),
    publicKeyFile: join(tmp, 'public.pem'),
  };
  writeFileSync(keys.privateKeyFile, privateKeyPem, { mode: 0o600 });
  writeFileSync(keys.publicKeyFile, publicKeyPem);
  return {
    tmp,
    keys,
    quick: opts.quick,
    smoke: opts.smoke,
    concurrency: opts.concurrency,
    withAlternatives: opts.withAlternatives,
    retryContended: opts.retryContended,
    cpuProfDir: opts.cpuProfDir,
    sizes: sizes(opts),
    cache: new Map(),
    log: (line) => process.stderr.write(`${line}\n`),
  };
}

function keyPairOf(privateKeyPem) {
  return { privateKeyPem, publicKeyPem: createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }) };
}

/** What was measured: the commit, whether the tree had changes, and when dist/ was built. */
function source() {
  const git = (...args) => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return undefined;
    }
  };
  return {
    commit: git('rev-parse', '--short', 'HEAD'),
    uncommittedChanges: (git('status', '--porcelain', '--', 'src') ?? '') !== '',
    distBuiltAt: distBuiltAt(),
  };
}

const distBuiltAt = () =>
  statSync(fileURLToPath(new URL('../dist/bin.cjs', import.meta.url))).mtime.toISOString();

const load = () => loadavg().map((value) => Math.round(value * 100) / 100);

async function main() {
  const opts = options();
  if (opts.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const started = performance.now();
  const startLoad = load();
  // Read before the first run: colleagues may commit or rebuild dist/ while it goes on.
  const measured = source();
  const ctx = await setUp(opts);
  const selected = PARTS.filter(
    (part) => opts.only.includes(part.name) || (part === signing && opts.only.some((n) => NEEDS_SIGNING.has(n))),
  );
  process.stderr.write(
    `ccs-bulk bench: node ${process.version}, ${cpus().length} cores, load average ${startLoad.join(' ')}` +
      `${opts.smoke ? ', smoke sizes' : opts.quick ? ', quick sizes' : ''}\n`,
  );
  const rows = [];
  const parts = [];
  for (const part of selected) {
    const partStarted = performance.now();
    const partLoad = load();
    ctx.log(`part ${part.name} (load average ${partLoad.join(' ')})`);
    let partRows;
    try {
      partRows = await part.run(ctx);
    } catch (error) {
      ctx.log(`  failed: ${error?.stack ?? error}`);
      partRows = [errorRow(part.name, error)];
    }
    rows.push(...partRows);
    const seconds = (performance.now() - partStarted) / 1000;
    parts.push({ name: part.name, seconds, loadAverageAtStart: partLoad, rows: partRows });
    ctx.log(`  (${seconds.toFixed(0)} s)`);
  }
  const totalSeconds = (performance.now() - started) / 1000;
  const table = formatTable(rows);
  process.stdout.write(`${table}\n\n`);
  process.stdout.write(
    `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; load average at start ` +
      `${startLoad.join(' ')}, at end ${load().join(' ')}; ${totalSeconds.toFixed(0)} s in all. ` +
      "'Other load': cores busy with processes not ours during the row's runs (⚠ above 0.25).\n",
  );
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    loadAverageAtStart: startLoad,
    loadAverageAtEnd: load(),
    source: { ...measured, distRebuiltDuringRun: distBuiltAt() !== measured.distBuiltAt },
    totalSeconds,
    options: { ...opts, out: undefined },
    sizes: ctx.sizes,
    parts,
  };
  if (results.source.distRebuiltDuringRun) {
    process.stdout.write('WARNING: dist/ was rebuilt during the run: figures may mix two builds.\n');
  }
  writeFileSync(opts.out, `${JSON.stringify(results, null, 2)}\n`);
  process.stderr.write(`results: ${opts.out}\n`);
  const fullRun = opts.out === DEFAULT_OUT && !opts.quick && opts.rows === undefined && opts.only.length === PARTS.length;
  if (fullRun) for (const file of writeBenchDocs(opts.out)) process.stderr.write(`updated: ${file}\n`);
  return rows.some((r) => r.result === 'ERROR') ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`bench: ${error?.message ?? error}\n`);
    process.exit(2);
  },
);
