/**
 * A 50 MB field with the default 1 MiB bound: an error at its line, never an out-of-memory.
 * The read runs in a process of its own (the built reader, dist/, under a 32-MB heap), so what
 * it holds is this read's only: the suite's workers run many files each.
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

// Reads the file with openRows and reports what came out, what stopped it, and the most memory
// the process's JavaScript held at once (heap plus Buffers), sampled every millisecond and after
// every batch.
const READ = `
const { openRows } = await import(${JSON.stringify(join(ROOT, 'dist', 'import', 'read', 'index.js'))});
const held = () => { const m = process.memoryUsage(); return m.heapUsed + m.external; };
const before = held();
let peak = before;
const sample = setInterval(() => (peak = Math.max(peak, held())), 1);
const source = await openRows(process.argv[1]);
const first = [];
let error;
try {
  for await (const batch of source.batches) {
    peak = Math.max(peak, held());
    for (const record of batch) first.push(record.values[0]);
  }
} catch (e) {
  error = { name: e.constructor.name, code: e.code, line: e.line, message: e.message };
}
peak = Math.max(peak, held());
clearInterval(sample);
console.log(JSON.stringify({ sizeBytes: source.info.sizeBytes, first, error, bytesRead: source.bytesRead(), heldGrowth: peak - before }));
`;

it('is refused at its line with bounded memory, after the rows before it', async () => {
  // A 32-MB JavaScript heap: a reader that held the 50-MB field as a string would die of it.
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=32', '--input-type=module', '-e', READ, path], {
    cwd: ROOT,
    timeout: 60_000,
  });
  const read = JSON.parse(stdout) as {
    sizeBytes: number;
    first: string[];
    error?: { name: string; code: string; line: number; message: string };
    bytesRead: number;
    heldGrowth: number;
  };
  expect(read.sizeBytes).toBeGreaterThan(FIELD_BYTES);
  expect(read.first).toEqual(['Ann']);
  expect(read.error).toMatchObject({ name: 'InputError', code: 'record_too_large', line: 3 });
  expect(read.error?.message).toContain(`limit of ${DEFAULT_MAX_RECORD_SIZE / 1_048_576} MiB`);
  // Stopped right after the bound, not at the end of the file.
  expect(read.bytesRead).toBeLessThan(4 * DEFAULT_MAX_RECORD_SIZE);
  // What the reader held, not the process's peak RSS: a cold child's RSS on a busy machine
  // jumped 100+ MB above its start with the same reads (pages the kernel accounts, not ours),
  // while a field held whole would be 50 MB of Buffers or more.
  expect(read.heldGrowth).toBeLessThan(32 * 1024 * 1024);
});
