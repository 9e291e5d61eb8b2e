/**
 * The image the Kubernetes examples name: the Dockerfile is checked as text on every run (the
 * final stage is node:20-slim with only the production dependencies and dist/, a non-root user,
 * `ccs-bulk` as the entrypoint, no build tools); where a container builder answers (`docker
 * info`), the image is built and run: `--version`, and an import against the embedded sandbox.
 * Where none does, the test says so on its output: the build is not silently skipped.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_HEADER, makeTempDir, ROOT, validRows } from './helpers.js';

interface Stage {
  from: string;
  name: string | undefined;
  /** The stage's instructions, continuation lines joined, comments dropped. */
  lines: string[];
}

/** The Dockerfile's stages, in order. */
function stages(text: string): Stage[] {
  const found: Stage[] = [];
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  for (const line of instructions) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) found.push({ from: from[1]!, name: from[2], lines: [] });
    else found.at(-1)?.lines.push(line);
  }
  return found;
}

const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const STAGES = stages(DOCKERFILE);
const FINAL = STAGES.at(-1)!;
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string>; devDependencies: Record<string, string> };

describe('the Dockerfile, as text', () => {
  it('the final stage is node:20-slim, runs as a non-root user (by number: runAsNonRoot checks it), ccs-bulk as the entrypoint', () => {
    expect(FINAL.from).toBe('node:20-slim');
    const user = FINAL.lines.filter((line) => /^USER\s/i.test(line)).at(-1);
    expect(user).toBeDefined();
    const [uid] = user!.replace(/^USER\s+/i, '').split(':');
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).not.toBe(0);
    expect(FINAL.lines).toContain('ENTRYPOINT ["ccs-bulk"]');
    // ccs-bulk on PATH is the package's bin.
    expect(FINAL.lines.join('\n')).toContain(`ln -s /app/${PACKAGE.bin['ccs-bulk']} /usr/local/bin/ccs-bulk`);
  });

  it('installs no dev dependency and no build tool in the final stage; its node_modules come from an npm ci --omit=dev', () => {
    const runs = FINAL.lines.filter((line) => /^RUN\s/i.test(line)).join('\n');
    expect(runs).not.toMatch(/\bnpm (ci|install|i)\b|\bapt-get install\b|\bapk add\b|\b(gcc|g\+\+|make|python3?|build-essential)\b/);
    const copies = FINAL.lines.filter((line) => /^COPY\s/i.test(line));
    const modules = copies.find((line) => line.includes('node_modules'));
    const source = STAGES.find((stage) => modules?.includes(`--from=${stage.name} `));
    expect(source, 'node_modules copied from a stage of this file').toBeDefined();
    const install = source!.lines.filter((line) => /\bnpm (ci|install)\b/.test(line));
    expect(install).toHaveLength(1);
    expect(install[0]).toMatch(/npm ci --omit=dev --ignore-scripts/);
    // From the build stage, the compiled CLI only: no sources, no dev tools.
    for (const line of copies.filter((line) => /--from=/.test(line) && line !== modules)) expect(line).toMatch(/\/dist \.\/dist$/);
    for (const name of Object.keys(PACKAGE.devDependencies)) expect(copies.join('\n')).not.toContain(name);
  });

  it('the build stage compiles with the project\'s own build config; .dockerignore sends only what it reads', () => {
    const build = STAGES.find((stage) => stage.lines.some((line) => line.includes('tsc -p tsconfig.build.json')));
    expect(build?.from).toBe('node:20-slim');
    expect(build!.lines.some((line) => /^RUN npm ci --ignore-scripts/.test(line))).toBe(true);
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').filter((line) => line && !line.startsWith('#'));
    expect(ignore[0]).toBe('*');
    expect(ignore.slice(1).sort()).toEqual(['!LICENSE', '!package-lock.json', '!package.json', '!src', '!tsconfig.build.json', '!tsconfig.json']);
  });
});

/** `docker info` answers: a daemon (or another builder behind the docker CLI) is there. */
function builderAnswers(): { ok: boolean; why: string } {
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 20_000 });
  if (info.error) return { ok: false, why: `no docker CLI (${(info.error as NodeJS.ErrnoException).code})` };
  if (info.status !== 0) return { ok: false, why: (info.stderr || info.stdout).trim().split('\n')[0] ?? `exit ${info.status}` };
  return { ok: true, why: `docker ${info.stdout.trim()}` };
}

describe('the image, built and run where a container builder answers', () => {
  const builder = builderAnswers();
  const tag = `ccs-bulk-test:${process.pid}`;
  let temp: Awaited<ReturnType<typeof makeTempDir>>;

  beforeAll(async () => {
    temp = await makeTempDir();
    if (!builder.ok) {
      console.log(`docker.test: no container builder here (${builder.why}): the image was not built or run; only the Dockerfile's checks above ran`);
      return;
    }
    const built = spawnSync('docker', ['build', '-t', tag, ROOT], { encoding: 'utf8', timeout: 900_000 });
    expect(built.status, built.stderr).toBe(0);
  }, 960_000);
  afterAll(async () => {
    if (builder.ok) spawnSync('docker', ['rmi', '-f', tag]);
    await temp?.cleanup();
  });

  it('--version prints the package version; an import against the embedded sandbox creates every row', async () => {
    if (!builder.ok) {
      console.log(`docker.test: image not built (${builder.why})`);
      return;
    }
    const version = spawnSync('docker', ['run', '--rm', tag, '--version'], { encoding: 'utf8', timeout: 120_000 });
    expect(version.stdout.trim()).toBe(PACKAGE.version);
    await writeFile(join(temp.dir, 'clients.csv'), stringify([CLIENT_HEADER, ...validRows(5)]));
    // The image's user (1000) writes the results beside the file, as on the Job's volume.
    chmodSync(temp.dir, 0o777);
    const run = spawnSync('docker', ['run', '--rm', '-v', `${temp.dir}:/data`, tag, 'import', 'clients.csv', '--sandbox', '--json', '--quiet'], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { counts: { created: number } }).counts.created).toBe(5);
  }, 600_000);
});
