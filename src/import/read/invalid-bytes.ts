/**
 * The invalid bytes of a file read as UTF-8, on their way from the decoder (which knows their
 * line) to the records (which know their cells). Each became one U+FFFD in the text, so the
 * k-th U+FFFD in a record's values is the k-th invalid sequence on its lines.
 */
import type { InvalidCell } from './types.js';

export class InvalidByteQueue {
  #lines: number[] = [];
  #bytes: string[] = [];
  #next = 0;

  get size(): number {
    return this.#lines.length - this.#next;
  }

  /** `bytes` as shown to the user, e.g. `0xE9` or `0xE2 0x82`. */
  push(line: number, bytes: string): void {
    this.#lines.push(line);
    this.#bytes.push(bytes);
  }

  /**
   * The invalid bytes of the record on lines `first` to `last`, each placed in the cell
   * holding its U+FFFD; undefined when it has none. Those on lines before it (a `sep=` line)
   * are dropped.
   */
  take(first: number, last: number, values: readonly string[]): InvalidCell[] | undefined {
    const found: string[] = [];
    while (this.#next < this.#lines.length && this.#lines[this.#next]! <= last) {
      if (this.#lines[this.#next]! >= first) found.push(this.#bytes[this.#next]!);
      this.#next++;
    }
    if (this.#next === this.#lines.length) {
      this.#lines = [];
      this.#bytes = [];
      this.#next = 0;
    }
    return found.length === 0 ? undefined : locate(found, values);
  }
}

function locate(found: readonly string[], values: readonly string[]): InvalidCell[] {
  const cells: InvalidCell[] = [];
  let k = 0;
  for (let column = 0; column < values.length && k < found.length; column++) {
    for (let at = values[column]!.indexOf('\uFFFD'); at !== -1 && k < found.length; at = values[column]!.indexOf('\uFFFD', at + 1)) {
      cells.push({ column, bytes: found[k++]! });
    }
  }
  // Not in a cell (the parser dropped it with a quote): the row's, without a column.
  while (k < found.length) cells.push({ column: -1, bytes: found[k++]! });
  return cells;
}
