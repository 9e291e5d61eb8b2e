/**
 * `ccs-bulk export --out - | head -3`: a reader that closes the pipe early ends the export
 * quietly with exit 0, as `cat` does (the rest of the window is not paged); `--json` alone
 * says so (`readerClosed`), on stderr since stdout is the data. A real process and a real pipe.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { BIN, ROOT } from './helpers.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 3000, seedRandom: 4 });
});
afterAll(async () => {
  await sandbox?.close();
});

/** `bash -o pipefail -c 'ccs-bulk … | head -3'`: the pipeline's status is ccs-bulk's when it fails. */
function pipeline(args: string[], tail: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const quoted = [process.execPath, BIN, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
    const child = spawn('bash', ['-o', 'pipefail', '-c', `${quoted} | ${tail}`], {
      cwd: ROOT,
      env: { ...process.env, CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('--out - into a reader that closes early', () => {
  it('| head -3: the three lines, exit 0, nothing on stderr', async () => {
    const requests = sandbox.stats.requests;
    const result = await pipeline(['export', '--out', '-', '--page-size', '100', '--prefetch', '2'], 'head -3');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\r\n').slice(0, 1)).toEqual([expect.stringMatching(/^id,name,email,/)]);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(3);
    // It stopped paging once the reader was gone: far fewer than the 31 pages of the whole export.
    expect(sandbox.stats.requests - requests).toBeLessThan(31);
  });

  it('-q and xlsx too; --json says readerClosed on stderr', async () => {
    const quiet = await pipeline(['export', '--out', '-', '-q', '--format', 'jsonl'], 'head -c 100 > /dev/null');
    expect([quiet.code, quiet.stderr]).toEqual([0, '']);
    const xlsx = await pipeline(['export', '--out', '-', '--format', 'xlsx'], 'head -c 1000 > /dev/null');
    expect([xlsx.code, xlsx.stderr]).toEqual([0, '']);
    const json = await pipeline(['export', '--out', '-', '--json'], 'head -1');
    expect(json.code).toBe(0);
    const summary = JSON.parse(json.stderr) as { readerClosed: boolean; out: string; rows: number };
    expect(summary).toMatchObject({ readerClosed: true, out: 'stdout' });
    expect(summary.rows).toBeLessThan(3000);
  });

  it('a reader that reads everything still gets everything (exit 0, no readerClosed)', async () => {
    const result = await pipeline(['export', '--out', '-', '--json', '-q', '--columns', 'id'], 'wc -l');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('3001');
    expect(JSON.parse(result.stderr)).not.toHaveProperty('readerClosed');
  });
});
