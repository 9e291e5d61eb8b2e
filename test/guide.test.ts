/**
 * The guide as a test: the commands of docs/first-import.md and of the README's "Before your
 * first real import" run in order, as a user would type them (bash, `ccs-bulk` on PATH, a home of
 * their own), against `ccs-bulk sandbox --tls` started as the guide says, with its `export` lines
 * pasted. docs/first-import.md shows what each command prints: that is compared with what it
 * printed, so the page and the program cannot drift apart.
 *
 * In the shown output, `…` matches any text within a line and a line of `…` alone any number of
 * lines; the sandbox's URL is shown as https://ccs.example.com and the home as /home/you. The
 * plain progress lines a slow machine may add (every 5 s) are left out of the comparison.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, collectOutput, makeTempDir, ROOT } from './helpers.js';

// Read at collection time: the tests below are made from the text.
const GUIDE = readFileSync(join(ROOT, 'docs', 'first-import.md'), 'utf8');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SHOWN_URL = 'https://ccs.example.com';
const SHOWN_HOME = '/home/you';

type Step = { kind: 'file'; name: string; content: string } | { kind: 'command'; command: string; shown: string[] };

/** The page's `console` blocks (`$ ` commands, each followed by what it prints) and named example files. */
function guideSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  for (const block of markdown.matchAll(/^```(\S+)(?: (\S+))?\n([\s\S]*?)^```$/gm)) {
    const [, lang, name, body] = block;
    if (lang === 'csv' && name !== undefined) steps.push({ kind: 'file', name, content: body! });
    if (lang !== 'console') continue;
    for (const line of body!.replace(/\n$/, '').split('\n')) {
      if (line.startsWith('$ ')) steps.push({ kind: 'command', command: line.slice(2), shown: [] });
      else (steps.at(-1) as Extract<Step, { kind: 'command' }>).shown.push(line);
    }
  }
  return steps;
}

/** Shown output → a regex over the printed lines: `…` is any text, a line of `…` any lines. */
function shownPattern(shown: readonly string[]): RegExp {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const lines = shown.map((line) =>
    line.trim() === '…' ? '(?:.*\\n)*?' : `${line.trimEnd().split('…').map(escape).join('.*?')}\\n`,
  );
  return new RegExp(`^${lines.join('')}$`);
}

/** `export A=1 B=~/x`: the assignments, `~/` expanded, a trailing comment dropped. */
function assignments(command: string, home: string): [string, string][] {
  const text = command.replace(/\s+#.*$/, '').replace(/^export\s+/, '');
  // NAME=value or NAME='value' (as the sandbox quotes a path with spaces, `'\''` for a quote).
  return [...text.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=('(?:[^']|'\\'')*'|\S+)/g)].map(([, name, raw]) => {
    const value = raw!.startsWith("'") ? raw!.slice(1, -1).replace(/'\\''/g, "'") : raw!;
    return [name!, value.replace(/^~\//, `${home}/`)];
  });
}

interface Session {
  home: string;
  work: string;
  env: Record<string, string>;
  sandbox: ChildProcessWithoutNullStreams | undefined;
  /** The sandbox's URL, shown as https://ccs.example.com. */
  url: string | undefined;
}

async function openSession(): Promise<Session & { cleanup(): Promise<void> }> {
  const temp = await makeTempDir();
  const home = join(temp.dir, 'home');
  const work = join(temp.dir, 'work');
  const bin = join(temp.dir, 'bin');
  for (const dir of [home, work, bin]) await mkdir(dir, { recursive: true });
  await writeFile(join(bin, 'ccs-bulk'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  await chmod(join(bin, 'ccs-bulk'), 0o755);
  const env: Record<string, string> = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home, LANG: 'C.UTF-8', TMPDIR: temp.dir };
  const session: Session = { home, work, env, sandbox: undefined, url: undefined };
  // The same object the steps fill in (its sandbox above all): a copy would leave the sandbox running.
  return Object.assign(session, {
    async cleanup() {
      session.sandbox?.kill('SIGTERM');
      if (session.sandbox && session.sandbox.exitCode === null) await new Promise((resolve) => session.sandbox!.once('close', resolve));
      await temp.cleanup();
    },
  });
}

/** `ccs-bulk sandbox …` as the guide gives it, on a free port; its `export` lines go into the session. */
async function startSandbox(session: Session, command: string): Promise<void> {
  const child = spawn('bash', ['-c', `exec ${command} --port 0`], { cwd: session.work, env: session.env, stdio: 'pipe' });
  session.sandbox = child;
  const output = collectOutput(child);
  await new Promise<void>((resolve, reject) => {
    child.once('close', (code) => reject(new Error(`sandbox exited ${code}: ${output.stderr}`)));
    child.stdout.on('data', () => {
      if (output.stdout.includes('Press Ctrl-C')) resolve();
    });
  });
  for (const line of output.stdout.split('\n')) {
    if (/^\s+export /.test(line)) for (const [name, value] of assignments(line.trim(), session.home)) session.env[name] = value;
  }
  session.url = session.env.CCS_BASE_URL;
}

interface Ran {
  code: number | null;
  printed: string;
}

async function runCommand(session: Session, command: string): Promise<Ran> {
  const child = spawn('bash', ['-c', command], { cwd: session.work, env: session.env, stdio: 'pipe' });
  child.stdin.end();
  const output = collectOutput(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  let printed = output.stdout + output.stderr;
  if (session.url !== undefined) printed = printed.replaceAll(session.url, SHOWN_URL);
  printed = printed.replaceAll(session.home, SHOWN_HOME);
  const lines = printed
    .split('\n')
    .filter((line) => !/^ccs-bulk: \d+ \w+, \d+\/s/.test(line))
    .map((line) => line.trimEnd());
  while (lines.at(-1) === '') lines.pop();
  return { code, printed: lines.map((line) => `${line}\n`).join('') };
}

/** An `export` line: the session takes its variables, except those the sandbox set (the rehearsal's point). */
function applyExport(session: Session, command: string, fromSandbox: ReadonlySet<string>): void {
  for (const [name, value] of assignments(command, session.home)) if (!fromSandbox.has(name)) session.env[name] = value;
}

describe('shown output', () => {
  it('`…` is any text within a line, a line of `…` any lines; everything else exactly', () => {
    const pattern = shownPattern(['Validated 3 rows in … (… rows/s): 2 valid', '…', 'done']);
    expect('Validated 3 rows in 0s (34 rows/s): 2 valid\na\nb\ndone\n').toMatch(pattern);
    expect('Validated 3 rows in 0s (34 rows/s): 2 valid\ndone\n').toMatch(pattern);
    expect('Validated 3 rows in 0s (34 rows/s): 3 valid\ndone\n').not.toMatch(pattern);
    expect('Validated 3 rows in 0s (34 rows/s): 2 valid\ndone\nmore\n').not.toMatch(pattern);
    expect('').toMatch(shownPattern([]));
    expect('x\n').not.toMatch(shownPattern([]));
  });
});

const SANDBOX_COMMAND = /`(ccs-bulk sandbox [^`]+)`/.exec(GUIDE)?.[1] ?? '';
const FROM_SANDBOX = new Set(['CCS_BASE_URL', 'CCS_TOKEN', 'NODE_EXTRA_CA_CERTS']);

describe('docs/first-import.md, run as written', () => {
  const steps = guideSteps(GUIDE);
  const commands = steps.filter((step) => step.kind === 'command');
  let session: Awaited<ReturnType<typeof openSession>>;
  beforeAll(async () => {
    session = await openSession();
  });
  afterAll(() => session?.cleanup());

  it('has the rehearsal sandbox, an example file and the steps with their output', () => {
    expect(SANDBOX_COMMAND).toMatch(/^ccs-bulk sandbox --tls --public-key ~\/\.ccs\/public\.pem$/);
    expect(steps.filter((step) => step.kind === 'file').map((step) => (step as { name: string }).name)).toEqual(['clients.csv']);
    expect(commands.length).toBeGreaterThanOrEqual(10);
    expect(commands.filter((step) => step.kind === 'command' && step.shown.length > 0).length).toBeGreaterThanOrEqual(8);
  });

  // One test per command, in the page's order: a failure names the step that drifted.
  for (const [index, step] of steps.entries()) {
    if (step.kind === 'file') {
      it(`writes the example ${step.name}`, async () => {
        await writeFile(join(session.work, step.name), step.content);
      });
      continue;
    }
    it(`$ ${step.command}`, async () => {
      // The sandbox needs the public key of step 1: started once it exists, as the page says.
      if (session.sandbox === undefined && index > 0) await startSandbox(session, SANDBOX_COMMAND);
      if (step.command.startsWith('export ')) return applyExport(session, step.command, FROM_SANDBOX);
      const ran = await runCommand(session, step.command);
      expect([0, 1], `exit code of ${step.command}:\n${ran.printed}`).toContain(ran.code);
      expect(ran.printed).toMatch(shownPattern(step.shown));
    }, 180_000);
  }
});

/** The numbered steps' inline commands: `ccs-bulk …` and `export …` spans, in order. */
function readmeCommands(): string[] {
  const start = README.indexOf('## Before your first real import');
  const section = README.slice(start, README.indexOf('\n### ', start));
  return [...section.matchAll(/`((?:ccs-bulk|export) [^`]+)`/g)].map((m) => m[1]!);
}

describe("README's Before your first real import, run as written", () => {
  const commands = readmeCommands();
  const example = guideSteps(GUIDE).find((step) => step.kind === 'file') as Extract<Step, { kind: 'file' }>;
  let session: Awaited<ReturnType<typeof openSession>>;
  beforeAll(async () => {
    session = await openSession();
    await writeFile(join(session.work, example.name), example.content);
  });
  afterAll(() => session?.cleanup());

  it('finds the nine steps’ commands', () => {
    expect(commands).toEqual([
      'ccs-bulk keygen --out ~/.ccs',
      expect.stringMatching(/^export CCS_BASE_URL=\S+ CCS_TOKEN=\S+ CCS_SIGNING_KEY_FILE=~\/\.ccs\/private\.pem$/),
      'ccs-bulk check',
      expect.stringMatching(/^ccs-bulk import clients\.csv --sandbox/),
      'ccs-bulk validate clients.csv',
      expect.stringMatching(/^ccs-bulk import clients\.csv --failed fix-me\.csv/),
      'ccs-bulk import fix-me.csv',
      'ccs-bulk export --out check.csv',
    ]);
  });

  it('each works, in order, and does what the step says', async () => {
    for (const command of commands) {
      if (session.sandbox === undefined && command !== commands[0]) await startSandbox(session, SANDBOX_COMMAND);
      if (command.startsWith('export ')) {
        applyExport(session, command, FROM_SANDBOX);
        continue;
      }
      // Step 8: "Fix the rows in fix-me.csv", as the user would, then import it.
      if (command === 'ccs-bulk import fix-me.csv') {
        const fixMe = join(session.work, 'fix-me.csv');
        await writeFile(fixMe, (await readFile(fixMe, 'utf8')).replace('marie@example,', 'marie@example.com,'));
      }
      const ran = await runCommand(session, command);
      expect([0, 1], `${command}:\n${ran.printed}`).toContain(ran.code);
      expect(ran.printed, command).not.toMatch(/error:|internal error/);
      if (command === 'ccs-bulk check') expect(ran.printed, command).toMatch(/^All checks hold(?: \(\d+ warnings?\))?: ready to import\.$/m);
      if (command === 'ccs-bulk validate clients.csv') {
        const results = await readFile(join(session.work, 'clients.csv.results.csv'), 'utf8');
        expect(results.split('\n').filter((line) => /^\d+,invalid,/.test(line)), results).toHaveLength(1);
      }
    }
    const exported = await readFile(join(session.work, 'check.csv'), 'utf8');
    // The rehearsal (--sandbox) created nothing on the service: the three clients are the import's
    // (in the order the service created them: rows are sent concurrently).
    expect(exported.split('\r\n').filter((line) => line.includes('@example.com')).map((line) => line.split(',')[1]).sort()).toEqual([
      'Anna Schmidt',
      'Luca Rossi',
      'Marie Dubois',
    ]);
  }, 300_000);
});
