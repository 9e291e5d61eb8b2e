/**
 * An .xls's BIFF workbook stream made safe to hand to SheetJS, which reads every record it
 * knows and believes what it says: a 6-byte MergeCells record makes 65,535 ranges, a text
 * cell's length makes a 64 KiB string from nothing, a formula too short for its fields or a
 * text record without its length sends it round a loop without end. The records are walked
 * here as SheetJS walks them; only those the cells' values need are left for it (the others
 * renamed to a record it skips, so nothing moves), those are checked against their own length,
 * and the cells are counted against a bound.
 */

/** BIFF record types (MS-XLS 2.3, and BIFF2–4's). */
const BOF = new Set([0x0009, 0x0209, 0x0409, 0x0809]);
const EOF = 0x000a;
const FILE_PASS = 0x002f;
const SST = 0x00fc;
const MUL_RK = 0x00bd;
const FORMULA = new Set([0x0006, 0x0206, 0x0406]);
const FORMAT = new Set([0x041e, 0x001e]);
const XF = new Set([0x00e0, 0x0043, 0x0243, 0x0443]);
/** Records SheetJS joins to the record before them (their headers skipped). */
const CONTINUE: ReadonlyMap<number, number> = new Map([
  [0x003c, 0],
  [0x043c, 0],
  [0x0812, 4],
  [0x0875, 12],
  [0x087f, 12],
]);
/** One cell each: numbers, text, booleans and errors, formulas (by their cached result). */
const CELL = new Set([0x0203, 0x0003, 0x0002, 0x027e, 0x00fd, 0x0204, 0x0004, 0x00d6, 0x0205, 0x0005, ...FORMULA]);
/** What else the values need: the sheets, the text table, number formats, the epoch, the code page. */
const KEPT = new Set([...BOF, EOF, FILE_PASS, 0x0085, 0x0042, 0x0022, SST, 0x0207, 0x0007, MUL_RK, ...FORMAT, ...XF, ...CELL, ...CONTINUE.keys()]);
/** A record SheetJS knows and skips (PhoneticInfo): what the others are renamed to. */
const SKIPPED = 0x00ef;

/** Far past Excel 97–2003's 4,000 cell formats and ~250 number formats: a stream past these is not from it. */
const MAX_XFS = 65_536;
const MAX_FORMATS = 4_096;

export type BiffProblem =
  | { kind: 'protected' }
  | { kind: 'cells'; limit: number }
  | { kind: 'damaged'; reason: string };

export class BiffError extends Error {
  constructor(readonly problem: BiffProblem) {
    super(problem.kind);
  }
}

/**
 * Rewrites `stream` (in place) for SheetJS and returns it, or throws a BiffError: the workbook
 * is encrypted, declares more than `maxCells` cells, or has a record that reaches past itself.
 */
export function sanitizeBiff(stream: Buffer, maxCells: number): Buffer {
  const damaged = (reason: string): never => {
    throw new BiffError({ kind: 'damaged', reason });
  };
  // SheetJS's idea of the version, which its BOF records and some cells change as it reads.
  let biff = 8;
  let guessed = false;
  let depth = 0;
  let last = 0;
  // Records counted against their bounds.
  const count = { cells: 0, xfs: 0, formats: 0, tables: 0 };
  let at = 0;
  while (at < stream.length - 1) {
    const type = stream.readUInt16LE(at);
    if (type === 0 && last === EOF) break;
    const length = at + 4 <= stream.length ? stream.readUInt16LE(at + 2) : 0;
    if (depth === 0 && !BOF.has(type)) break;
    const start = at + 4;
    const end = Math.min(start + length, stream.length);
    at = start + length;
    if (!KEPT.has(type)) {
      stream.writeUInt16LE(SKIPPED, start - 4);
      continue;
    }
    if (CONTINUE.has(type)) continue;
    last = type;
    const size = end - start + continued(stream, at, damaged);
    const u16 = (offset: number) => (offset + 2 <= end - start ? stream.readUInt16LE(start + offset) : 0);
    /** A string's character count read at `offset`, against the bytes after it (a character is one at least). */
    const fits = (offset: number, headerAfter = 0) => {
      if (u16(offset) > size - offset - 2 - headerAfter) damaged(`record 0x${type.toString(16)} holds text longer than itself`);
    };

    // SheetJS changes its idea of the version as it reads some cells, before reading them.
    if ((type === 0x0204 || type === 0x0203) && guessed && biff === 2) biff = 5;
    else if (type === 0x0004 && guessed && biff === 5) biff = 2;
    if (size < minimumLength(type, biff)) damaged(`record 0x${type.toString(16)} is shorter than its own fields`);

    if (BOF.has(type)) {
      const version = u16(0);
      const kind = size >= 4 ? u16(2) : 0;
      if (biff === 8) biff = ({ 0x0009: 2, 0x0209: 3, 0x0409: 4 } as Record<number, number>)[type] ?? VERSIONS[version] ?? 8;
      guessed = version === 0;
      if (version === 0 && kind === 0x1000) biff = 5;
      if (biff === 8 && version === 0 && kind === 16) biff = 2;
      depth++;
    } else if (type === EOF) {
      depth = Math.max(0, depth - 1);
    } else if (type === FILE_PASS) {
      throw new BiffError({ kind: 'protected' });
    } else if (type === SST) {
      if (++count.tables > 1) damaged('more than one shared string table');
    } else if (XF.has(type)) {
      if (++count.xfs > MAX_XFS) damaged(`more than ${MAX_XFS.toLocaleString('en-US')} cell formats`);
    } else if (FORMAT.has(type)) {
      if (++count.formats > MAX_FORMATS) damaged(`more than ${MAX_FORMATS.toLocaleString('en-US')} number formats`);
      if (biff > 5) fits(type === 0x041e ? 2 : 0);
    } else if (type === 0x0207 && biff !== 2) {
      fits(0);
    }

    if (type === MUL_RK) count.cells += Math.max(0, Math.floor((size - 6) / 6));
    else if (CELL.has(type)) count.cells++;
    if (count.cells > maxCells) throw new BiffError({ kind: 'cells', limit: maxCells });

    // Text cells, read by the version SheetJS has then.
    if (type === 0x0204) {
      if (biff !== 2) fits(size === 7 ? 7 : 6);
    } else if (type === 0x0004) {
      if (biff > 5) fits(7);
    } else if (type === 0x00d6) {
      fits(biff === 2 ? 7 : 6);
    } else if (FORMULA.has(type) && !neutralizeFormula(stream, start, end, biff)) {
      // Too short to hold its own length: SheetJS would read it from what follows.
      stream.writeUInt16LE(SKIPPED, start - 4);
    }
  }
  return stream;
}

/**
 * The fields a record must hold before its text: SheetJS reads a one-byte length past a
 * record's end as `undefined`, and its string reader then counts up to it for ever.
 */
function minimumLength(type: number, biff: number): number {
  switch (type) {
    case 0x0007:
      return 1;
    case 0x001e:
      return biff > 5 ? 2 : 1;
    case 0x041e:
      return biff > 5 ? 4 : 3;
    case 0x0004:
      return biff > 5 ? 9 : 8;
    case 0x0204:
    case 0x0207:
      return biff === 2 ? (type === 0x0204 ? 8 : 1) : 0;
    case 0x0085:
      return biff === 4 ? 1 : biff >= 8 ? 8 : 6;
    default:
      return 0;
  }
}

const VERSIONS: Record<number, number> = { 0x0200: 2, 0x0300: 3, 0x0400: 4, 0x0500: 5, 0x0600: 8, 0x0002: 2, 0x0007: 2 };

/**
 * The bytes of the CONTINUE records from `at` that SheetJS reads as part of the record before.
 * It looks for every character's place among the CONTINUEs' starts: thousands of tiny ones
 * (Excel fills each to 8 KB) would make reading the text quadratic, and are refused.
 */
function continued(stream: Buffer, at: number, damaged: (reason: string) => never): number {
  let bytes = 0;
  let count = 0;
  for (let next = at; next + 4 <= stream.length; count++) {
    const skip = CONTINUE.get(stream.readUInt16LE(next));
    if (skip === undefined) break;
    const length = stream.readUInt16LE(next + 2);
    bytes += Math.max(0, length - skip);
    next += 4 + length;
  }
  if (count > 16 && bytes < (count - 1) * 1024) damaged(`${count} CONTINUE records of ${bytes} bytes`);
  return bytes;
}

/**
 * A formula's tokens, which SheetJS parses even when asked for no formulas (and can loop on
 * forever when they are damaged), are marked absent (a length of 0xFFFF; 0 in BIFF2): its
 * cached value, which is what is read, stays. False when the record cannot hold the length.
 */
function neutralizeFormula(stream: Buffer, start: number, end: number, biff: number): boolean {
  const offset = (biff === 2 ? 7 : 6) + 8 + 1 + (biff === 2 ? 0 : 1) + (biff >= 5 ? 4 : 0);
  if (biff === 2) {
    if (start + offset >= end) return false;
    stream[start + offset] = 0;
    return true;
  }
  if (start + offset + 2 > end) return false;
  stream.writeUInt16LE(0xffff, start + offset);
  return true;
}
