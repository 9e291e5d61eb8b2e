/**
 * A 50 MB field with the default 1 MiB bound: an error at its line, never an out-of-memory.
 * Alone in its file so the process's peak RSS reflects this read only.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import { DEFAULT_MAX_RECORD_SIZE, openRows, type RawRecord } from '../src/import/read/index.js';
import { makeTempDir } from './helpers.js';

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

it('is refused at its line with bounded memory, after the rows before it', async () => {
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const source = await openRows(path);
  expect(source.info.sizeBytes).toBeGreaterThan(FIELD_BYTES);
  const records: RawRecord[] = [];
  let error: unknown;
  try {
    for await (const batch of source.batches) records.push(...batch);
  } catch (e) {
    error = e;
  }
  // Peak over the whole process so far, so an upper bound on what this read used.
  const peakGrowth = process.resourceUsage().maxRSS * 1024 - rssBefore;
  expect(records.map((r) => r.values[0])).toEqual(['Ann']);
  expect(error).toBeInstanceOf(InputError);
  expect(error).toMatchObject({ code: 'record_too_large', line: 3 });
  expect((error as Error).message).toContain(`limit of ${DEFAULT_MAX_RECORD_SIZE / 1_048_576} MiB`);
  // Stopped right after the bound, not at the end of the file.
  expect(source.bytesRead()).toBeLessThan(4 * DEFAULT_MAX_RECORD_SIZE);
  expect(peakGrowth).toBeLessThan(100 * 1024 * 1024);
});
