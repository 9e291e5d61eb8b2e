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
  it('no module but main.ts imports cli.ts', async () => {
    const offenders: string[] = [];
    for (const file of await filesUnder(join(ROOT, 'src'), '.ts')) {
      const name = relative(join(ROOT, 'src'), file);
      if (name === 'main.ts' || name === 'cli.ts') continue;
      if (/from '(\.\.?\/)+cli\.js'/.test(await readFile(file, 'utf8'))) offenders.push(name);
    }
    expect(offenders).toEqual([]);
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

  // Type-only imports count: a type tie is still a tie between the two files' meanings (one
  // cannot change without reading the other), and the circles found so far were half type-only.
  it('no import circle under src/, type-only imports included', async () => {
    const graph = await importGraph(join(ROOT, 'src'));
    expect(graph.get('service/client.ts')).toContain('service/send-request.ts');
    expect(importCircles(graph).map((circle) => circle.join(' ↔ '))).toEqual([]);
  });
});
