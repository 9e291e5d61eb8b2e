/**
 * The package as a user gets it: `npm pack`, the tarball unpacked into a scratch project's
 * node_modules, and two programs written as users write them (fixtures/consumer: an ES module
 * and a CommonJS one) compiled by strict TypeScript with `module: nodenext` against what was
 * packed, then run against a sandbox: a small CSV imported, exported back.
 *
 * The scratch project links only the dependencies the packed package.json names, from this
 * checkout's node_modules: `npm install` of the tarball would fetch them from the registry,
 * which a test must not need; a module the build imports but package.json does not name fails
 * here as it would for a user.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliEnv, makeTempDir, ROOT } from './helpers.js';

const run = promisify(execFile);

interface Packed {
  filename: string;
  files: { path: string }[];
}

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** A child process's exit and output, a failure included (tsc exits 2 on a type error). */
async function outcomeOf(file: string, args: string[], cwd: string): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, env: cliEnv(), timeout: 120_000, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? failed.message };
  }
}

/** What a consumer program prints: its round trip, and the typed error it caught. */
interface RoundTrip {
  created: number;
  exportedRows: number;
  exportText: string;
  refused: { code: string; known: boolean; family: boolean } | string;
  /** The ES module's nightly-sync pattern: rows from a generator, ids from onRow, a stop caught, a listing, a preflight. */
  sync?: { created: number; ids: number; stop: { code: string; notAttempted: number; cause: string } | undefined; listed: number; preflight: boolean };
}

const CONSUMER_TSCONFIG = {
  // What `tsc --init` gives a Node project today, strict, with no skipLibCheck: the package's
  // declarations are checked as the consumer's own code is.
  compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], outDir: 'out' },
  files: ['esm.mts', 'cjs.cts'],
};

describe('the packed package in a scratch project', () => {
  let temp: Awaited<ReturnType<typeof makeTempDir>>;
  let packed: Packed;
  let manifest: { engines?: { node?: string }; dependencies?: Record<string, string> };
  let app: string;
  let compiled: Outcome;

  beforeAll(async () => {
    temp = await makeTempDir();
    const npm = await outcomeOf('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', temp.dir], ROOT);
    expect(npm.code, npm.stderr).toBe(0);
    packed = (JSON.parse(npm.stdout) as Packed[])[0]!;
    app = join(temp.dir, 'app');
    const installed = join(app, 'node_modules', 'ccs-bulk');
    await mkdir(installed, { recursive: true });
    const tar = await outcomeOf('tar', ['-xzf', join(temp.dir, packed.filename), '-C', installed, '--strip-components=1'], temp.dir);
    expect(tar.code, tar.stderr).toBe(0);
    manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as typeof manifest;
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'nightly-sync', private: true }));
    for (const name of [...Object.keys(manifest.dependencies ?? {}), '@types/node']) {
      await mkdir(dirname(join(app, 'node_modules', name)), { recursive: true });
      await symlink(join(ROOT, 'node_modules', name), join(app, 'node_modules', name), 'junction');
    }
    for (const file of ['esm.mts', 'cjs.cts']) await copyFile(join(ROOT, 'fixtures', 'consumer', file), join(app, file));
    await writeFile(join(app, 'tsconfig.json'), JSON.stringify(CONSUMER_TSCONFIG));
    compiled = await outcomeOf(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
  }, 240_000);

  afterAll(async () => {
    await temp?.cleanup();
  });

  it('ships the build and no source map that points at a file it does not ship', async () => {
    const paths = new Set(packed.files.map((file) => file.path));
    expect([...paths]).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/bin.cjs']));
    expect([...paths].filter((path) => path.startsWith('src/') || path.startsWith('test/'))).toEqual([]);
    const dangling: string[] = [];
    for (const path of [...paths].filter((name) => name.endsWith('.map'))) {
      const map = JSON.parse(await readFile(join(app, 'node_modules', 'ccs-bulk', path), 'utf8')) as { sources: string[] };
      for (const source of map.sources) {
        if (!paths.has(posix.normalize(posix.join(posix.dirname(path), source)))) dangling.push(`${path} → ${source}`);
      }
    }
    expect(dangling).toEqual([]);
  });

  it('asks for a Node whose require() loads ES modules without a flag (20.19+, 22.12+)', () => {
    // The package is ES modules only; CommonJS callers require() it, which Node enables by
    // default from 20.19.0 on the 20 line and from 22.12.0 on the 22 line.
    expect(manifest.engines?.node).toBe('^20.19.0 || >=22.12.0');
  });

  it('compiles an ES module and a CommonJS consumer under strict nodenext with no error', () => {
    expect(compiled.stdout + compiled.stderr).toBe('');
    expect(compiled.code).toBe(0);
  });

  it.each([
    ['an ES module', 'esm.mjs'],
    ['a CommonJS module', 'cjs.cjs'],
  ])('%s imports a CSV into a sandbox and exports it back', async (_, program) => {
    const work = join(temp.dir, program);
    await mkdir(work);
    await writeFile(join(work, 'keys.json'), JSON.stringify(inject('signingKeys')));
    const ran = await outcomeOf(process.execPath, [join(app, 'out', program), work], app);
    // No ExperimentalWarning either: require() of the package is plain on the Nodes engines names.
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const trip = JSON.parse(ran.stdout) as RoundTrip;
    expect(trip).toMatchObject({ created: 2, exportedRows: 2, refused: { code: 'bad_base_url', known: true, family: true } });
    expect(trip.exportText).toContain('ada@example.com');
    expect(trip.exportText).toContain('bob@example.com');
    if (program === 'esm.mjs') {
      expect(trip.sync).toEqual({ created: 5, ids: 5, stop: { code: 'interrupted', notAttempted: expect.any(Number), cause: 'window closed' }, listed: 7, preflight: true });
    }
  });
});
