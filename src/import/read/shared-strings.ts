/**
 * An .xlsx shared-strings table held compactly: every string as UTF-8 in 1 MiB pages, plus
 * one 32-bit position per string, so a string costs its UTF-8 bytes + 4 (a JS string in an
 * array costs ~40 bytes more). A million distinct names and e-mails stay tens of MB.
 */

const PAGE_BITS = 20;
const PAGE_SIZE = 1 << PAGE_BITS;
/** 12 bits of page number: 4 GiB of string bytes. */
const MAX_PAGES = 1 << (32 - PAGE_BITS);

export class SharedStrings {
  private pages: Buffer[] = [];
  /** Bytes used of each page. */
  private used: number[] = [];
  /** Per string: page << PAGE_BITS | offset in the page. */
  private positions: Uint32Array;
  private count = 0;

  constructor(expected = 0) {
    // A producer's count is a hint, not a promise: capped so a wrong one cannot reserve gigabytes.
    this.positions = new Uint32Array(Math.min(Math.max(1024, expected), 1 << 24));
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held: the pages and the positions. */
  get bytes(): number {
    return this.pages.reduce((sum, page) => sum + page.length, 0) + this.positions.byteLength;
  }

  add(text: string): void {
    const length = Buffer.byteLength(text);
    let page = this.pages.length - 1;
    // A string starts below PAGE_SIZE in its page (the offset has PAGE_BITS); a longer one gets a page of its own.
    if (page < 0 || this.used[page]! >= PAGE_SIZE || this.used[page]! + length > this.pages[page]!.length) {
      if (this.pages.length === MAX_PAGES) throw new RangeError('shared strings over 4 GiB');
      this.pages.push(Buffer.allocUnsafe(Math.max(PAGE_SIZE, length)));
      this.used.push(0);
      page++;
    }
    const offset = this.used[page]!;
    this.used[page] = offset + this.pages[page]!.write(text, offset);
    if (this.count === this.positions.length) {
      const grown = new Uint32Array(this.positions.length * 2);
      grown.set(this.positions);
      this.positions = grown;
    }
    this.positions[this.count++] = ((page << PAGE_BITS) | offset) >>> 0;
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
