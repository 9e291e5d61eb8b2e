/**
 * The scheduled-reports examples run as written: the README's crontab line and example config,
 * docs/scheduled-reports.md's crontab lines, Kubernetes CronJob command (with its ConfigMap)
 * and GitHub Actions steps, read out of the Markdown so they cannot drift. Each runs under
 * `env -i` (what the example sets, PATH to node, HOME) from an empty directory against a
 * sandbox on 127.0.0.1, twice: the first night makes the folders and exports everything that
 * matches; the second (the clock a day on, a few clients created and an older one approved
 * since) exactly the clients that entered each report: an approved report holds the client
 * approved since, which a window of creation dates would miss.
 * The rule for what the test changes in an example is in the doc ("How the examples are tested").
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { read as readWorkbook, utils as sheetUtils } from '@e965/xlsx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { parseCsv } from './export.helpers.js';
import { BIN, collectOutput, makeTempDir, ROOT } from './helpers.js';
import { shellQuote } from '../src/cli/resume-command.js';

const DOC = readFileSync(join(ROOT, 'docs', 'scheduled-reports.md'), 'utf8');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const DAY_MS = 86_400_000;

/** A heading's text up to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`no "${heading}" section`);
  const level = heading.indexOf(' ');
  // A `# comment` inside a fenced block is not a heading.
  let fenced = false;
  const end = lines.findIndex((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    return i > start && !fenced && /^#+ /.test(line) && line.indexOf(' ') <= level;
  });
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

/** The fenced blocks of a language in a piece of Markdown. */
const blocks = (markdown: string, language: string): string[] =>
  [...markdown.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);

/** A crontab line's command (the five schedule fields dropped). */
const cronCommands = (block: string): string[] =>
  block.split('\n').filter((line) => /^[\d*]/.test(line)).map((line) => /^(?:\S+\s+){5}(.*)$/.exec(line)![1]!);

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;

/**
 * The doc's world moved into `root`: its service is the sandbox, its absolute paths under root
 * (`shell`: the text is a shell line, so root is quoted as a word: TMPDIR may hold a space).
 */
function rooted(text: string, root: string, shell = false): string {
  const base = shell ? shellQuote(root) : root;
  return text
    .replaceAll('https://ccs.example.com', sandbox.url)
    .replaceAll('${{ vars.CCS_BASE_URL }}', sandbox.url)
    .replaceAll('${{ secrets.CCS_TOKEN }}', sandbox.token)
    .replace(/(?<![\w.}/-])\/(srv|etc|reports|config|secrets)(?=\/|\b)/g, `${base}/$1`);
}

/** `ccs-bulk` and `npx ccs-bulk` on PATH; the second night's with the clock a day on. */
async function writeShims(night: 1 | 2): Promise<string> {
  const bin = join(temp.dir, `bin-night${night}`);
  await mkdir(bin);
  let preload = '';
  if (night === 2) {
    const clock = join(bin, 'next-day.cjs');
    await writeFile(
      clock,
      `const Real = Date;\nclass NextDay extends Real {\n  constructor(...args) { if (args.length === 0) super(Real.now() + ${DAY_MS}); else super(...args); }\n  static now() { return Real.now() + ${DAY_MS}; }\n}\nglobalThis.Date = NextDay;\n`,
    );
    preload = ` --require '${clock}'`;
  }
  await writeFile(join(bin, 'ccs-bulk'), `#!/bin/sh\nexec '${process.execPath}'${preload} '${BIN}' "$@"\n`, { mode: 0o755 });
  await writeFile(
    join(bin, 'npx'),
    '#!/bin/sh\n[ "$1" = ccs-bulk ] || { echo "npx: only ccs-bulk here" >&2; exit 127; }\nshift\nexec ccs-bulk "$@"\n',
    { mode: 0o755 },
  );
  return bin;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Root (CI) runs the examples as `nobody`, as a scheduler's service account would: another user than the one who set them up. */
const NOBODY = process.getuid?.() === 0 ? 65_534 : undefined;

/** `env -i NAME=VALUE… argv` in `cwd` (as nobody under root), bounded (a hung run is killed and fails the test). */
function runBare(argv: string[], cwd: string, night: 1 | 2, extra: Record<string, string> = {}): Promise<Run> {
  const path = `${join(temp.dir, `bin-night${night}`)}:${dirname(process.execPath)}:/usr/bin:/bin`;
  const env = Object.entries({ PATH: path, HOME: join(temp.dir, 'home'), ...extra }).map(([name, value]) => `${name}=${value}`);
  let command = ['/usr/bin/env', '-i', ...env, ...argv];
  if (NOBODY !== undefined) {
    // What the test laid out (as root) becomes the scheduler account's, as its volumes and home would be.
    expect(spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, temp.dir]).status).toBe(0);
    command = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...command];
  }
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { cwd, stdio: 'pipe' });
    const output = collectOutput(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ...output });
    });
    child.stdin.end();
  });
}

const sh = (command: string, cwd: string, night: 1 | 2, extra?: Record<string, string>) =>
  runBare(['/bin/sh', '-c', command], cwd, night, extra);

/** The client ids in a report file (CSV, gzip CSV or xlsx). */
async function idsIn(file: string): Promise<string[]> {
  const bytes = await readFile(file);
  if (file.endsWith('.xlsx')) {
    const book = readWorkbook(bytes);
    return sheetUtils.sheet_to_json<{ id: string }>(book.Sheets[book.SheetNames[0]!]!).map((row) => String(row.id));
  }
  const text = (file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  return parseCsv(text).map((row) => row.id!);
}

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** A report an example writes: where, which files are its, which clients it holds. */
interface Report {
  folder: string;
  name: RegExp;
  status?: string;
}

interface Example {
  title: string;
  /** Lays out the scheduler's world for a night (token file, config, empty folders); returns the run. */
  night(root: string, night: 1 | 2): Promise<Run[]>;
  reports: Report[];
  /** --quiet runs print nothing on a good night; the CI's --json run prints its summary. */
  quiet?: false;
}

async function writeToken(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${sandbox.token}\n`, { mode: 0o600 });
}

/** A crontab example: each line run by sh from its `cd` target, with a config file there or not. */
function crontab(title: string, lines: string[], config: string | undefined, reports: Report[]): Example {
  return {
    title,
    reports,
    async night(root, night) {
      if (night === 1) {
        await mkdir(join(root, 'srv', 'reports'), { recursive: true });
        await writeToken(join(root, 'etc', 'ccs', 'token'));
        if (config !== undefined) await writeFile(join(root, 'srv', 'reports', 'ccs-bulk.config.json'), rooted(config, root));
      }
      const runs: Run[] = [];
      for (const line of lines) runs.push(await sh(rooted(line, root, true), root, night));
      return runs;
    },
  };
}

const README_CRON = cronCommands(blocks(section(README, '## Scheduled reports'), 'sh')[0]!);
// The example config the README's Config file section points to.
const README_CONFIG = blocks(section(DOC, '### An example file'), 'json')[0]!;
const DOC_CONFIG = blocks(section(DOC, '## A report in the config file'), 'json')[0]!;
const DOC_CRON = blocks(section(DOC, '## crontab'), 'cron').flatMap(cronCommands);
const KEYS_CRON = blocks(section(DOC, '## Config file keys'), 'cron').flatMap(cronCommands);
const K8S = blocks(section(DOC, '## Kubernetes CronJob'), 'yaml');
const CI = blocks(section(DOC, '## CI schedule (GitHub Actions)'), 'yaml')[0]!;

const approvedGz: Report = { folder: 'srv/reports', name: /^approved-\d{4}-\d\d-\d\d\.csv\.gz$/, status: 'approved' };

/** The CronJob: the ConfigMap's file at /config, the Secret at /secrets/ccs, the image's entrypoint and `args` in workingDir. */
const kubernetes: Example = {
  title: 'Kubernetes CronJob',
  reports: [{ folder: 'reports', name: /^approved-\d{4}-\d\d-\d\d\.csv\.gz$/, status: 'approved' }],
  async night(root, night) {
    const [configMap = '', cronJob = ''] = K8S.filter((block) => /kind: (ConfigMap|CronJob)/.test(block));
    if (night === 1) {
      const json = /ccs-bulk\.config\.json: \|\n((?: {4}.*\n?)+)/.exec(configMap)![1]!.replace(/^ {4}/gm, '');
      await mkdir(join(root, 'config'), { recursive: true });
      await writeFile(join(root, 'config', 'ccs-bulk.config.json'), rooted(json, root));
      await writeToken(join(root, 'secrets', 'ccs', 'token'));
      await mkdir(join(root, 'reports'));
    }
    const args = /args:\n((?:\s+- .*\n)+)/.exec(cronJob)![1]!.trim().split('\n').map((line) => rooted(line.trim().slice(2), root));
    // The image's ENTRYPOINT (see the Dockerfile): ccs-bulk itself, no shell.
    const command = ['ccs-bulk', ...args];
    const workingDir = rooted(/workingDir: (\S+)/.exec(cronJob)![1]!, root);
    return [await runBare(command, workingDir, night)];
  },
};

/** The workflow: its `run:` steps with their `env:`, in a fresh workspace; the cache carries state/. */
const githubActions: Example = {
  title: 'GitHub Actions schedule',
  quiet: false,
  reports: [{ folder: 'workspace/reports', name: /^approved-\d{4}-\d\d-\d\d\.csv$/, status: 'approved' }],
  async night(root, night) {
    const workspace = join(root, 'workspace');
    // A new runner each night: the workspace is empty but for what the cache restores (state/).
    if (night === 2) await rename(workspace, join(root, 'night1'));
    await mkdir(workspace, { recursive: true });
    if (night === 2) await cp(join(root, 'night1', 'state'), join(workspace, 'state'), { recursive: true });
    const steps = [...rooted(CI, root).matchAll(/- run: (.*)\n\s+env: \{ (\w+): "(.*)" \}/g)];
    expect(steps.length).toBe(2);
    const runs: Run[] = [];
    for (const [, command, name, value] of steps) runs.push(await runBare(['/bin/bash', '-e', '-c', command!], workspace, night, { [name!]: value! }));
    return runs;
  },
};

const EXAMPLES: Example[] = [
  crontab("README's crontab line", README_CRON, undefined, [approvedGz]),
  ...DOC_CRON.map((line, i) => crontab(`the doc's crontab line ${i + 1}`, [line], DOC_CONFIG, [approvedGz])),
  crontab("README's example config, by the doc's crontab lines", KEYS_CRON, README_CONFIG, [
    { folder: 'srv/reports/reports', name: /^weekly-approved-\d{4}-\d\d-\d\d\.xlsx$/, status: 'approved' },
    { folder: 'srv/reports/reports', name: /^nightly-new-\d{4}-\d\d-\d\dT\d{6}Z\.csv\.gz$/ },
  ]),
  kubernetes,
  githubActions,
];

/** Files of each report after each night, per example. */
const seen = new Map<string, Set<string>>();
let newClients: string[] = [];
/** An older client (there on the first night, not approved then) approved before the second. */
let approvedSince: string | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 60 });
  temp = await makeTempDir();
  await mkdir(join(temp.dir, 'home'));
  await writeShims(1);
  await writeShims(2);
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

/** Runs an example's night and checks each report's new file holds exactly `expected` of its clients. */
async function runNight(example: Example, index: number, night: 1 | 2, expected: (status?: string) => string[]): Promise<void> {
  const root = join(temp.dir, `example-${index}`);
  await mkdir(root, { recursive: true });
  const runs = await example.night(root, night);
  for (const run of runs) {
    expect(run.code, `${example.title}: ${run.stderr}`).toBe(0);
    if (example.quiet !== false) expect(run.stderr, example.title).toBe('');
  }
  if (example.quiet === false) {
    const summary = JSON.parse(runs.at(-1)!.stdout) as { rows: number };
    expect(summary.rows).toBe(expected(example.reports[0]!.status).length);
  }
  for (const report of example.reports) {
    const key = `${index}:${report.name.source}`;
    const before = seen.get(key) ?? new Set<string>();
    const files = (await readdir(join(root, report.folder))).filter((name) => report.name.test(name));
    const fresh = files.filter((name) => !before.has(name));
    expect(fresh, `${example.title}: one new ${report.name.source} file`).toHaveLength(1);
    seen.set(key, new Set(files));
    const ids = await idsIn(join(root, report.folder, fresh[0]!));
    expect(ids.sort(), `${example.title}: ${fresh[0]}`).toEqual(expected(report.status).sort());
  }
}

describe('the scheduled-reports examples, as written, from an empty directory', () => {
  it('finds every example in the Markdown', () => {
    expect(README_CRON).toHaveLength(1);
    expect(DOC_CRON).toHaveLength(2);
    expect(KEYS_CRON).toHaveLength(2);
    expect(K8S.some((block) => block.includes('kind: ConfigMap'))).toBe(true);
    expect(CI).toContain('npx ccs-bulk export');
  });

  const everyone = (status?: string) =>
    sandbox.store.all().filter((client) => status === undefined || client.status === status).map((client) => client.id);

  it.each(EXAMPLES.map((example, index) => [example.title, example, index] as const))('first night: %s', async (_title, example, index) => {
    await runNight(example, index, 1, everyone);
  }, 120_000);

  it('the first night made the state and log folders private, and the files in them', () => {
    const root = join(temp.dir, 'example-0', 'srv', 'reports');
    expect(modeOf(join(root, 'state'))).toBe('700');
    expect(modeOf(join(root, 'state', 'approved.json'))).toBe('600');
    expect(modeOf(join(root, 'ccs-bulk.log'))).toBe('600');
    const k8s = join(temp.dir, `example-${EXAMPLES.indexOf(kubernetes)}`, 'reports', 'state');
    expect(modeOf(k8s)).toBe('700');
  });

  it.each(EXAMPLES.map((example, index) => [example.title, example, index] as const))('second night: %s', async (_title, example, index) => {
    if (newClients.length === 0) {
      // Created between the nights: three approved, two not.
      const statuses = ['approved', 'pending_review', 'approved', 'rejected', 'approved'] as const;
      newClients = statuses.map((status, i) => sandbox.store.insert({ name: `Night ${i}`, email: `night${i}@example.com`, status }).id);
      approvedSince = sandbox.store.all().find((client) => client.status === 'pending_review')!.id;
      sandbox.store.setStatus(approvedSince, { status: 'approved' });
    }
    // New clients for every report; the client approved since for the approved ones.
    const fresh = (status?: string) => [
      ...newClients.filter((id) => status === undefined || sandbox.store.get(id)!.status === status),
      ...(status === 'approved' ? [approvedSince!] : []),
    ];
    await runNight(example, index, 2, fresh);
  }, 120_000);
});
