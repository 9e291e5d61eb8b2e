/**
 * What SheetJS is given of an .xls, chosen by its first bytes as SheetJS chooses its reader: a
 * BIFF workbook stream (out of its OLE container, sanitized by biff-records.ts), or the HTML,
 * XML or delimited text that older programs save under the name, counted first. Every other
 * format SheetJS would guess at (SYLK, DIF, dBASE, Lotus, RTF…) is refused: each is a parser
 * of its own to trust, for files no one exports client lists in.
 */
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { BiffError, sanitizeBiff } from './biff-records.js';
import { readCompoundFile } from './compound-file.js';

/**
 * The cells an .xls may hold, all sheets together: SheetJS keeps each as an object of ~80
 * bytes, so 4 million are ~320 MB, within the ~1 GB a whole-file read is allowed. An .xls holds
 * 65,536 rows of 256 columns a sheet, but a client list of 65,536 rows is 600,000 cells.
 */
export const MAX_XLS_CELLS = 4_000_000;

/** In HTML, each merged cell makes SheetJS look through every merge before it, for each cell. */
const MAX_HTML_SPANS = 1_000;
/** In Excel 2003 XML, a column's `ss:Span` makes SheetJS copy the column that many times. */
const MAX_XML_COLUMN_SPANS = 16_384;

export const PROTECTED = 'the workbook is password-protected: save an unprotected copy';

/** The bytes to hand SheetJS for `bytes`, the contents of `file`; throws an InputError when none are safe. */
export function xlsSource(bytes: Buffer, file: string): Buffer {
  try {
    return chooseSource(bytes, file);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw damaged(file, error instanceof Error ? error.message : String(error));
  }
}

function chooseSource(bytes: Buffer, file: string): Buffer {
  const refuse = (what: string): never => {
    throw new InputError(`${shownPath(file)} is ${what}, not an Excel workbook: save it as .xlsx or .csv and import that`, 'input_format', {
      file,
    });
  };
  const head = bytes.subarray(0, 8);
  const starts = (...magic: number[]) => magic.every((byte, i) => head[i] === byte);
  if (starts(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1)) return fromContainer(bytes, file);
  if (head[0] === 0x09 && (head[1] ?? 0xff) <= 0x08) return sanitized(bytes, file);
  if (starts(0x50, 0x4b) && (head[2] ?? 9) < 9 && (head[3] ?? 9) < 9) refuse('a zip archive (an .xlsx or .ods?)');
  if (starts(0x49, 0x44)) refuse('a SYLK file');
  if (starts(0x54, 0x41, 0x42, 0x4c)) refuse('a DIF file');
  if (starts(0x7b, 0x5c, 0x72, 0x74)) refuse('an RTF document');
  const lotus = starts(0x00, 0x00) && ((head[2]! >= 0x02 && head[3] === 0x00) || (head[2] === 0x00 && (head[3] === 0x08 || head[3] === 0x09)));
  if (lotus || starts(0xff, 0x00, 0x02, 0x00)) refuse('a Lotus or Quattro Pro file');
  if (DBASE.has(head[0]!) && ([0x03, 0x83, 0x8b, 0x8c].includes(head[0]!) || (head[2]! <= 12 && head[3]! <= 31))) refuse('a dBASE file');
  const text = starts(0xff, 0xfe) ? bytes.toString('utf16le', 2) : bytes.toString('latin1');
  if (text.startsWith('socialcalc:version:')) refuse('a SocialCalc file');
  checkText(text, file);
  return bytes;
}

/** dBASE version bytes SheetJS recognises. */
const DBASE = new Set([0x02, 0x03, 0x30, 0x31, 0x83, 0x8b, 0x8c, 0xf5]);

function fromContainer(bytes: Buffer, file: string): Buffer {
  const container = readCompoundFile(bytes);
  // An .xlsx saved with a password: the OLE container holds the encrypted package.
  if (container.entries.some((entry) => /^(?:EncryptedPackage|EncryptionInfo)$/i.test(entry.name))) {
    throw new InputError(`${shownPath(file)}: ${PROTECTED}`, 'input_protected', { file });
  }
  const stream = container.stream('Workbook') ?? container.stream('Book');
  if (stream === undefined) throw damaged(file, 'no Workbook stream in the container');
  return sanitized(stream, file);
}

function sanitized(stream: Buffer, file: string): Buffer {
  try {
    return sanitizeBiff(stream, MAX_XLS_CELLS);
  } catch (error) {
    if (!(error instanceof BiffError)) throw error;
    const { problem } = error;
    if (problem.kind === 'protected') throw new InputError(`${shownPath(file)}: ${PROTECTED}`, 'input_protected', { file });
    if (problem.kind === 'damaged') throw damaged(file, problem.reason);
    throw tooManyCells(file, problem.limit);
  }
}

/**
 * Markup or delimited text: each cell takes a tag (`<`) or a delimiter, so their count bounds
 * the cells; merged HTML cells and spanned XML columns are bounded for what SheetJS does with them.
 */
function checkText(text: string, file: string): void {
  // Whichever SheetJS makes of it (markup can turn out delimited text), a cell costs one of these.
  if (count(text, /[<,;\t|\n\r]/g) > MAX_XLS_CELLS) throw tooManyCells(file, MAX_XLS_CELLS);
  const spans = count(text, /(?:row|col)span/gi);
  if (spans > MAX_HTML_SPANS) {
    throw new InputError(
      `${shownPath(file)}: its HTML table has more than ${MAX_HTML_SPANS.toLocaleString('en-US')} merged cells: ` +
        'too many to read safely; save it as .xlsx or .csv and import that',
      'input_too_large',
      { file },
    );
  }
  let columns = 0;
  for (const match of text.matchAll(/Span\s*=\s*["']?\s*(\d+)/g)) {
    columns += Number(match[1]);
    if (columns > MAX_XML_COLUMN_SPANS) {
      throw new InputError(
        `${shownPath(file)}: its columns span more than ${MAX_XML_COLUMN_SPANS.toLocaleString('en-US')} columns, past a sheet's: ` +
          'the workbook is damaged or not from a spreadsheet',
        'input_xlsx',
        { file },
      );
    }
  }
}

function count(text: string, pattern: RegExp): number {
  let n = 0;
  for (pattern.lastIndex = 0; pattern.exec(text) !== null; ) n++;
  return n;
}

function damaged(file: string, reason: string): InputError {
  return new InputError(`${shownPath(file)}: cannot read the workbook (${reason}): is it a valid .xls file?`, 'input_xlsx', { file });
}

export function tooManyCells(file: string, limit: number): InputError {
  return new InputError(
    `${shownPath(file)}: the workbook holds more than ${limit.toLocaleString('en-US')} cells, the most an .xls is read with (it is read whole); ` +
      'save it as .xlsx or .csv, which are read as a stream, and import that',
    'input_too_large',
    { file },
  );
}
