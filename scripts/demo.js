#!/usr/bin/env node
// npm run demo: the main job on a fresh machine, no configuration. Starts the sandbox
// in-process, imports fixtures/clients.csv with the real CLI, exports the clients back,
// and shows where everything went. Output lands in demo-out/.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'demo-out');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true, mode: 0o700 });

const sandbox = await startSandbox();
const keyFile = join(out, 'sandbox-private.pem');
writeFileSync(keyFile, sandbox.privateKeyPem, { mode: 0o600 });
const env = {
  ...process.env,
  CCS_BASE_URL: sandbox.url,
  CCS_TOKEN: sandbox.token,
  CCS_SIGNING_KEY_FILE: keyFile,
};
// Asynchronous on purpose: the sandbox lives in this process and must keep answering.
const cli = (args) => {
  console.log(`\n$ ccs-bulk ${args.join(' ')}`);
  const child = spawn(process.execPath, [join(root, 'dist', 'bin.cjs'), ...args], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.on('close', resolve));
};

try {
  console.log(`Sandbox running at ${sandbox.url}`);
  const imported = await cli([
    'import',
    'fixtures/clients.csv',
    '--results',
    'demo-out/clients.results.csv',
    '--failed',
    'demo-out/clients.failed.csv',
  ]);
  const exported = await cli(['export', '--out', 'demo-out/clients-export.csv']);
  const exportText = readFileSync(join(out, 'clients-export.csv'), 'utf8');
  console.log('\ndemo-out/clients-export.csv, first lines:');
  console.log(exportText.split('\n').slice(0, 4).join('\n'));
  console.log(
    '\nFiles: demo-out/clients.results.csv (one line per input row), demo-out/clients.failed.csv (rows to fix),',
  );
  console.log('       demo-out/clients-export.csv (the export).');
  console.log(
    `Import exit code ${imported} (1 = some rows invalid, on purpose in this fixture); export exit code ${exported}.`,
  );
  process.exitCode = exported === 0 && imported !== null && imported <= 1 ? 0 : 1;
} finally {
  await sandbox.close();
}
