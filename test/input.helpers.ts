/** Shared by the reader tests: drain a RowSource, or drain it up to the error it throws. */
import type { RawRecord, RowSource } from '../src/import/read/index.js';

export async function readAll(source: RowSource): Promise<RawRecord[]> {
  const records: RawRecord[] = [];
  for await (const record of source.records) records.push(record);
  return records;
}

/** Records read before the error, and the error. */
export async function readUntilError(source: RowSource): Promise<{ records: RawRecord[]; error: unknown }> {
  const records: RawRecord[] = [];
  try {
    for await (const record of source.records) records.push(record);
  } catch (error) {
    return { records, error };
  }
  return { records, error: undefined };
}
