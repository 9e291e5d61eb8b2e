/**
 * The architecture as tests: the library's modules never reach the command line, and the
 * published type declarations (dist/**\/*.d.ts, built by `npm run build`) never mention yargs.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

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
});
