/**
 * An .xlsx shared-strings table held compactly: every string as UTF-8 in 1 MiB pages, plus
 * one 32-bit position per string, so a string costs its UTF-8 bytes + 4 (a JS string in an
 * array costs ~40 bytes more). A million distinct names and e-mails stay tens of MB.
 */

const PAGE_BITS = 20;
const PAGE_SIZE = 1 << PAGE_BITS;
/**
 * The most a table may hold, text and positions together: twice the 1M-row, 3M-distinct-string
 * workbook, and far enough under the reader's memory bound for the rest of the run.
 */
export const MAX_SHARED_STRINGS_BYTES = 128 * 1024 * 1024;
/** One string's (or inline cell's) characters: 32 times a cell's limit in Excel (32,767). */
export const MAX_CELL_CHARS = 1024 * 1024;

export class SharedStrings {
  private pages: Buffer[] = [];
  /** Bytes used of each page. */
  private used: number[] = [];
  /** Per string: page << PAGE_BITS | offset in the page. */
  private positions: Uint32Array;
  private count = 0;
  private pageBytes = 0;

  constructor(expected = 0) {
    // A producer's count is a hint, not a promise: capped so a wrong one cannot reserve much.
    this.positions = new Uint32Array(Math.min(Math.max(1024, expected), 1 << 22));
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held: the pages and the positions. */
  get bytes(): number {
    return this.pageBytes + this.positions.byteLength;
  }

  /** Adds `text`; false, adding nothing, when the table would grow past MAX_SHARED_STRINGS_BYTES. */
  add(text: string): boolean {
    const length = Buffer.byteLength(text);
    let page = this.pages.length - 1;
    // A string starts below PAGE_SIZE in its page (the offset has PAGE_BITS); a longer one gets a page of its own.
    const newPage = page < 0 || this.used[page]! >= PAGE_SIZE || this.used[page]! + length > this.pages[page]!.length;
    const pageSize = newPage ? Math.max(PAGE_SIZE, length) : 0;
    const grow = this.count === this.positions.length ? this.positions.byteLength : 0;
    if (this.bytes + pageSize + grow > MAX_SHARED_STRINGS_BYTES) return false;
    if (newPage) {
      this.pages.push(Buffer.allocUnsafe(pageSize));
      this.used.push(0);
      this.pageBytes += pageSize;
      page++;
    }
    const offset = this.used[page]!;
    this.used[page] = offset + this.pages[page]!.write(text, offset);
    if (grow > 0) {
      const grown = new Uint32Array(this.positions.length * 2);
      grown.set(this.positions);
      this.positions = grown;
    }
    this.positions[this.count++] = ((page << PAGE_BITS) | offset) >>> 0;
    return true;
  }

  /** The string at `index`, or undefined past the end. */
  get(index: number): string | undefined {
    if (!(index >= 0 && index < this.count)) return undefined;
    const position = this.positions[index]!;
    const page = position >>> PAGE_BITS;
    const start = position & (PAGE_SIZE - 1);
    const next = index + 1 < this.count ? this.positions[index + 1]! : -1;
    const end = next !== -1 && next >>> PAGE_BITS === page ? next & (PAGE_SIZE - 1) : this.used[page]!;
    return this.pages[page]!.toString('utf8', start, end);
  }
}
