#!/usr/bin/env node
// Regenerates fixtures/fix-it/fix-me.xlsx from fixtures/fix-it/clients.csv with the built CLI
// (npm run build first), then, where python3-openpyxl is installed, its reading of it:
// fixtures/fix-it/openpyxl.txt (PYTHON picks the interpreter; CI has no Python; test/import.fix-it.test.ts compares both).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, 'fixtures', 'fix-it');
const temp = mkdtempSync(join(tmpdir(), 'fix-it-'));
try {
  const run = spawnSync(
    process.execPath,
    [join(root, 'dist', 'bin.cjs'), 'validate', join(dir, 'clients.csv'), '--failed', join(dir, 'fix-me.xlsx'),
      '--results', join(temp, 'results.csv'), '--quiet'],
    { stdio: 'inherit' },
  );
  if (run.status !== 1) throw new Error(`validate exited ${run.status}, expected 1 (invalid rows)`);
  const text = execFileSync(process.env.PYTHON ?? 'python3', [join(root, 'scripts', 'fix-it-check.py'), join(dir, 'fix-me.xlsx')], {
    encoding: 'utf8',
  });
  writeFileSync(join(dir, 'openpyxl.txt'), text);
} finally {
  rmSync(temp, { recursive: true, force: true });
}
