import type { LineRecord, RawRecord } from './types.js';

/** Every cell empty or whitespace (NBSP included): a blank line or an Excel empty row. */
export function isBlank(values: readonly string[]): boolean {
  return values.every((value) => value.trim() === '');
}

/** Header cells as read, minus a stray BOM on the first and Excel's trailing empty cells. */
export function shapeHeaders(values: readonly string[]): string[] {
  const headers = values.slice(0, lastNonBlank(values, 0) + 1);
  if (headers[0]?.startsWith('\uFEFF')) headers[0] = headers[0].slice(1);
  return headers;
}

/**
 * Drops empty cells beyond the header width (Excel keeps a used range wider than the data),
 * so they do not count as extra fields; a non-empty extra cell keeps the row ragged.
 */
export function trimToWidth(values: string[], width: number): string[] {
  if (values.length <= width) return values;
  const keep = Math.max(width, lastNonBlank(values, width) + 1);
  return keep === values.length ? values : values.slice(0, keep);
}

function lastNonBlank(values: readonly string[], from: number): number {
  for (let i = values.length - 1; i >= from; i--) {
    if (values[i]!.trim() !== '') return i;
  }
  return from - 1;
}

export interface HeaderAndRecords {
  headers: string[];
  batches: AsyncGenerator<RawRecord[]>;
}

/**
 * Takes the first non-blank record as the header and numbers the data records after it.
 * Undefined when there is no non-blank record at all (an empty file or sheet).
 */
export async function splitHeader(source: AsyncGenerator<LineRecord[]>): Promise<HeaderAndRecords | undefined> {
  for (;;) {
    const next = await source.next();
    if (next.done) return undefined;
    const at = next.value.findIndex((record) => !isBlank(record.values));
    if (at === -1) continue;
    const header = next.value[at]!;
    const headers = shapeHeaders(header.values);
    const rest = next.value.slice(at + 1);
    return { headers, batches: numberRecords(rest, source, headers.length) };
  }
}

async function* numberRecords(
  first: LineRecord[],
  source: AsyncGenerator<LineRecord[]>,
  width: number,
): AsyncGenerator<RawRecord[]> {
  let row = 0;
  const number = (records: LineRecord[]) => {
    const numbered: RawRecord[] = [];
    for (const { values, line } of records) {
      if (isBlank(values)) continue;
      numbered.push({ row: ++row, line, values: trimToWidth(values, width) });
    }
    return numbered;
  };
  try {
    const head = number(first);
    if (head.length > 0) yield head;
    for (;;) {
      const next = await source.next();
      if (next.done) return;
      const batch = number(next.value);
      if (batch.length > 0) yield batch;
    }
  } finally {
    // The consumer stopped early (break, error): let the source release the file.
    await source.return(undefined);
  }
}
