#!/usr/bin/env node
// Generates fixtures/reports/: the clients of the sandbox report-sandbox.json describes, exported
// by the built CLI as an xlsx report and as CSV with --no-escape-formulas (the values as the
// service holds them), then openpyxl's read-back of the report as JSON, written and checked
// against the CSV by scripts/check-xlsx-report.py. CI compares them without Python.
// Needs `npm run build` and a python3 with openpyxl (`apt-get install python3-openpyxl`;
// PYTHON=/usr/bin/python3 if another python3 comes first on PATH).
// Run: node scripts/make-report-fixtures.js
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startSandbox } from '../dist/index.js';

const run = promisify(execFile);
const dir = fileURLToPath(new URL('../fixtures/reports/', import.meta.url));
const bin = fileURLToPath(new URL('../dist/bin.cjs', import.meta.url));
const check = fileURLToPath(new URL('check-xlsx-report.py', import.meta.url));

// Shared with test/export.xlsx.fixture.test.ts, which rebuilds the same sandbox.
const setup = JSON.parse(readFileSync(`${dir}report-sandbox.json`, 'utf8'));
const REPORT_ARGS = setup.exportArgs;

const sandbox = await startSandbox({ seed: setup.seed, seedRandom: setup.seedRandom, verifySignatures: false });
try {
  for (const client of setup.extraClients) sandbox.store.insert(client);
  const env = { ...process.env, CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
  await run(process.execPath, [bin, 'export', '--out', `${dir}clients.xlsx`, ...REPORT_ARGS], { env });
  const csv = ['--out', `${dir}clients.csv`, '--no-escape-formulas', ...REPORT_ARGS];
  await run(process.execPath, [bin, 'export', ...csv], { env });
} finally {
  await sandbox.close();
}
const python = process.env.PYTHON ?? 'python3';
const args = [check, `${dir}clients.xlsx`, `${dir}clients.csv`, '--dump', `${dir}clients.openpyxl.json`];
const { stdout } = await run(python, args);
process.stdout.write(stdout);
