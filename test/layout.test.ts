/**
 * The architecture as tests: the library's modules never reach the command line, the
 * published type declarations (dist/**\/*.d.ts, built by `npm run build`) never mention yargs,
 * no function is a long room, and no two modules import each other, however indirectly.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';
import { importCircles, importGraph, measureFunctions } from './layout.helpers.js';

/** Longer than this, a function holds two ideas (CONTRIBUTING.md). */
const MAX_FUNCTION_LINES = 90;

async function filesUnder(dir: string, suffix: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('layout', () => {
  it('no module but main.ts imports cli/cli.ts', async () => {
    const graph = await importGraph(join(ROOT, 'src'));
    const importers = [...graph].filter(([, targets]) => targets.includes('cli/cli.ts')).map(([from]) => from);
    expect(importers).toEqual(['main.ts']);
  });

  it('no published .d.ts references yargs', async () => {
    const declarations = await filesUnder(join(ROOT, 'dist'), '.d.ts');
    expect(declarations.length).toBeGreaterThan(20);
    expect(declarations.map((file) => relative(ROOT, file))).toContain('dist/index.d.ts');
    const offenders: string[] = [];
    for (const file of declarations) {
      if (/yargs/.test(await readFile(file, 'utf8'))) offenders.push(relative(ROOT, file));
    }
    expect(offenders).toEqual([]);
  });

  it('the library modules never touch the terminal or process streams', async () => {
    const offenders: string[] = [];
    for (const dir of ['import', 'export', 'service']) {
      for (const file of await filesUnder(join(ROOT, 'src', dir), '.ts')) {
        const text = await readFile(file, 'utf8');
        if (/process\.(stdout|stderr)|isTTY|progress\.js'/.test(text)) offenders.push(relative(ROOT, file));
      }
    }
    expect(offenders).toEqual([]);
  });

  it(`no function under src/ is longer than ${MAX_FUNCTION_LINES} lines`, async () => {
    const functions = await measureFunctions(join(ROOT, 'src'));
    // A parser that found nothing would pass: a declaration, a method and an arrow known to exist.
    expect(functions.map((found) => `${found.file}:${found.name}`)).toEqual(
      expect.arrayContaining(['service/client.ts:createServiceClient', 'service/client.ts:watchAnswers', 'import/read/xml-entities.ts:decodeEntities']),
    );
    const long = functions
      .filter((found) => found.lines > MAX_FUNCTION_LINES)
      .map((found) => `src/${found.file}:${found.line} ${found.name} ${found.lines} lines`);
    expect(long).toEqual([]);
  });

  it('README.md stays a page a user reads: at most 320 lines (details go to docs/)', async () => {
    const lines = (await readFile(join(ROOT, 'README.md'), 'utf8')).split('\n').length - 1;
    expect(lines).toBeGreaterThan(100);
    expect(lines).toBeLessThanOrEqual(320);
  });

  // The import runs read → row → fix-it → record → send (the sender records each outcome as it
  // lands, the record writes the fix-it workbook): a stage reaches back, never forward, and the
  // reader is reached through its face alone.
  it('import stages import only earlier stages; outside read/, only its index and types', async () => {
    const graph = await importGraph(join(ROOT, 'src'));
    const STAGES = ['read', 'row', 'fix-it', 'record', 'send'];
    const stageOf = (file: string) => /^import\/([^/]+)\//.exec(file)?.[1];
    expect([...graph.keys()].filter((file) => file.startsWith('import/')).map(stageOf)).toEqual(expect.arrayContaining([...STAGES, undefined]));
    const offenders: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        const [a, b] = [stageOf(from), stageOf(to)];
        if (b === 'read' && a !== 'read' && !/^import\/read\/(index|types)\.ts$/.test(to)) offenders.push(`${from} → ${to} (read's internals)`);
        if (a !== undefined && b !== undefined && STAGES.indexOf(b) > STAGES.indexOf(a)) offenders.push(`${from} → ${to} (a later stage)`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('src/ keeps main.ts, index.ts, errors.ts and bin.cts at the top, the rest in rooms', async () => {
    const top = (await readdir(join(ROOT, 'src'), { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name);
    expect(top.sort()).toEqual(['bin.cts', 'errors.ts', 'index.ts', 'main.ts']);
    const imports = (await readdir(join(ROOT, 'src', 'import'), { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name);
    expect(imports.sort()).toEqual(['defaults.ts', 'fields.ts', 'plan.ts', 'run-import.ts']);
  });

  // Type-only imports count: a type tie is still a tie between the two files' meanings (one
  // cannot change without reading the other), and the circles found so far were half type-only.
  it('no import circle under src/, type-only imports included', async () => {
    const graph = await importGraph(join(ROOT, 'src'));
    expect(graph.get('service/client.ts')).toContain('service/send-request.ts');
    expect(importCircles(graph).map((circle) => circle.join(' ↔ '))).toEqual([]);
  });
});
