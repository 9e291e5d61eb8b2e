/**
 * The pieces of an external merge sort, with flat memory: lines (a key and their bytes) are
 * gathered in chunks, each chunk sorted and written to a private temp run beside the output,
 * and the runs merged, k-way, smallest key first. Used by the import's results file (row
 * order) and the export's `--sort`; each reads its runs back in its own format.
 */
import { closeSync } from 'node:fs';
import { createPrivate, writeFully } from './output-files.js';
import { tempBeside } from './temp-files.js';

/** A line as UTF-8 bytes (compact, where a built string is a rope of its parts) and its sort key. */
export interface SortLine<K> {
  key: K;
  bytes: Buffer;
}

/** The next line of a sorted run, read on demand. */
export interface RunHead<K> {
  line: SortLine<K> | undefined;
  next(): Promise<void>;
}

/** Lines' bytes gathered into writes of about 64 KiB. */
export class BytesWriter {
  #parts: Buffer[] = [];
  #length = 0;

  constructor(
    readonly fd: number,
    readonly path: string,
  ) {}

  write(bytes: Buffer): void {
    this.#parts.push(bytes);
    this.#length += bytes.length;
    if (this.#length >= 65_536) this.flush();
  }

  flush(): void {
    if (this.#length === 0) return;
    writeFully(this.fd, Buffer.concat(this.#parts, this.#length), this.path);
    this.#parts = [];
    this.#length = 0;
  }
}

/** Sorts `lines` in place (Array.prototype.sort is stable: equal keys keep their order). */
export function sortLines<K>(lines: SortLine<K>[], compare: (a: K, b: K) => number): SortLine<K>[] {
  return lines.sort((a, b) => compare(a.key, b.key));
}

/** One chunk, sorted, as a private temp file beside `near`; returns its path. */
export function writeRun<K>(near: string, lines: SortLine<K>[], compare: (a: K, b: K) => number): string {
  const run = tempBeside(near);
  const fd = createPrivate(run);
  try {
    const out = new BytesWriter(fd, run);
    for (const line of sortLines(lines, compare)) out.write(line.bytes);
    out.flush();
  } finally {
    closeSync(fd);
  }
  return run;
}

/** k-way merge of sorted runs (a handful: one per chunk), smallest key first; the earlier run first on a tie. */
export async function mergeRuns<K>(
  heads: readonly RunHead<K>[],
  compare: (a: K, b: K) => number,
  emit: (line: SortLine<K>) => void | Promise<void>,
): Promise<void> {
  for (;;) {
    let min: RunHead<K> | undefined;
    for (const head of heads) if (head.line && (!min || compare(head.line.key, min.line!.key) < 0)) min = head;
    if (!min) return;
    await emit(min.line!);
    await min.next();
  }
}
