/** Shared by the reader tests: drain a RowSource, or drain it up to the error it throws. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { RawRecord, RowSource } from '../src/import/read/index.js';
import { makeTempDir } from './helpers.js';

export async function readAll(source: RowSource): Promise<RawRecord[]> {
  const records: RawRecord[] = [];
  for await (const batch of source.batches) records.push(...batch);
  return records;
}

/** Records read before the error, and the error. */
export async function readUntilError(source: RowSource): Promise<{ records: RawRecord[]; error: unknown }> {
  const records: RawRecord[] = [];
  try {
    for await (const batch of source.batches) records.push(...batch);
  } catch (error) {
    return { records, error };
  }
  return { records, error: undefined };
}

/** A temp dir for the test file, and a writer of named files in it; removed after the file's tests. */
export function useInputFiles(): {
  path(name: string): string;
  file(name: string, data: string | Uint8Array): Promise<string>;
} {
  let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined;
  beforeAll(async () => {
    temp = await makeTempDir();
  });
  afterAll(() => temp?.cleanup());
  return {
    path: (name) => join(temp!.dir, name),
    async file(name, data) {
      const path = join(temp!.dir, name);
      await writeFile(path, data);
      return path;
    },
  };
}
