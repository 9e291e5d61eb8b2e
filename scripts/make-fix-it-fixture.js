#!/usr/bin/env node
// Regenerates fixtures/fix-it/fix-me.xlsx from fixtures/fix-it/clients.csv with the built CLI
// (npm run build first), then what other programs make of it:
// - fixtures/fix-it/openpyxl.txt: openpyxl's reading (python3-openpyxl; PYTHON picks the interpreter);
// - fixtures/fix-it/libreoffice.csv: the sheet as LibreOffice reads it (soffice --headless --convert-to csv);
// - fixtures/fix-it/libreoffice-resaved.xlsx: the workbook as LibreOffice saves it back, as a
//   person who fixed it there would (libreoffice-calc-nogui).
// CI has neither program; test/import.fix-it.test.ts compares the committed files.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
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
  writeFileSync(join(dir, 'libreoffice.csv'), readFileSync(soffice(join(dir, 'fix-me.xlsx'), 'csv', temp)));
  writeFileSync(join(dir, 'libreoffice-resaved.xlsx'), readFileSync(soffice(join(dir, 'fix-me.xlsx'), 'xlsx', join(temp, 'resaved'))));
} finally {
  rmSync(temp, { recursive: true, force: true });
}

/** Converts `file` with LibreOffice (a profile of its own, so a running office is not disturbed); returns the output's path. */
function soffice(file, format, outdir) {
  execFileSync('soffice', ['--headless', '--norestore', `-env:UserInstallation=file://${join(temp, 'lo-profile')}`,
    '--convert-to', format, '--outdir', outdir, file], { stdio: 'inherit', timeout: 120_000 });
  return join(outdir, basename(file).replace(/\.xlsx$/, `.${format}`));
}
