/**
 * A 50 MB field with the default 1 MiB bound: an error at its line, never an out-of-memory.
 * The read runs in a process of its own (the built reader, dist/, under a 32-MB heap), so that
 * process's peak RSS reflects this read only: the suite's workers run many files each.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_MAX_RECORD_SIZE } from '../src/import/read/index.js';
import { makeTempDir, ROOT } from './helpers.js';

const FIELD_BYTES = 50 * 1024 * 1024;

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let path: string;
beforeAll(async () => {
  temp = await makeTempDir();
  path = join(temp.dir, 'field-50mb.csv');
  const out = createWriteStream(path);
  out.write('name,email,note\nAnn,ann@example.com,short\nBob,bob@example.com,"');
  const chunk = Buffer.alloc(1024 * 1024, 'x');
  for (let i = 0; i < FIELD_BYTES / chunk.length; i++) {
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end('"\nCarl,carl@example.com,after\n');
  await finished(out);
});
afterAll(() => temp.cleanup());

// Reads the file with openRows and reports what came out, what stopped it and the peak RSS.
const READ = `
const { openRows } = await import(${JSON.stringify(join(ROOT, 'dist', 'import', 'read', 'index.js'))});
const rssBefore = process.memoryUsage().rss;
const source = await openRows(process.argv[1]);
const first = [];
let error;
try {
  for await (const batch of source.batches) for (const record of batch) first.push(record.values[0]);
} catch (e) {
  error = { name: e.constructor.name, code: e.code, line: e.line, message: e.message };
}
const peakGrowth = process.resourceUsage().maxRSS * 1024 - rssBefore;
console.log(JSON.stringify({ sizeBytes: source.info.sizeBytes, first, error, bytesRead: source.bytesRead(), peakGrowth }));
`;

it('is refused at its line with bounded memory, after the rows before it', async () => {
  // A 32-MB JavaScript heap: a reader that held the 50-MB field as a string would die of it; and
  // a small heap is collected early, so the peak RSS is the reader's, not garbage not yet freed.
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=32', '--input-type=module', '-e', READ, path], {
    cwd: ROOT,
    timeout: 60_000,
  });
  const read = JSON.parse(stdout) as {
    sizeBytes: number;
    first: string[];
    error?: { name: string; code: string; line: number; message: string };
    bytesRead: number;
    peakGrowth: number;
  };
  expect(read.sizeBytes).toBeGreaterThan(FIELD_BYTES);
  expect(read.first).toEqual(['Ann']);
  expect(read.error).toMatchObject({ name: 'InputError', code: 'record_too_large', line: 3 });
  expect(read.error?.message).toContain(`limit of ${DEFAULT_MAX_RECORD_SIZE / 1_048_576} MiB`);
  // Stopped right after the bound, not at the end of the file.
  expect(read.bytesRead).toBeLessThan(4 * DEFAULT_MAX_RECORD_SIZE);
  expect(read.peakGrowth).toBeLessThan(100 * 1024 * 1024);
});
