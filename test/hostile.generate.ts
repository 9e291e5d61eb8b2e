/**
 * The large and special hostile inputs, made at test time in a temp dir (the repository keeps
 * only small files). Each generator writes `name` into `dir` and returns what to import.
 */
import { chmodSync, closeSync, constants, mkdirSync, mkdtempSync, openSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { cliForUser } from './hostile.helpers.js';
import { odsBombs, odsEndlessTag, textBombs, writeOds, xlsBombs, xlsxBombs } from './workbook-bombs.js';
import { repeated, writeZip, type ZipEntry } from './zip.helpers.js';

const HEADER = 'name,email,country,address,currency,application_date\n';
const ROW = 'Client 1,client1@example.com,DE,Street 1,EUR,2024-05-17\n';
const MiB = 1024 * 1024;

export interface Generated {
  path: string;
  /** run the CLI as this uid/gid (the permission case: root reads a 0000 file) */
  uid?: number;
  gid?: number;
  /** the CLI that uid runs (a copy it can reach when it cannot enter the checkout) */
  bin?: string;
  /** why the case cannot run on this machine (printed; never a failure) */
  skip?: string;
  /** undo what outlives the file (an open FIFO writer) */
  cleanup?: () => void;
}

/** Writes `parts`, each `times` times, in chunks: no large string in the test's memory. */
function writeRepeated(path: string, parts: [string | Buffer, number][]): void {
  const fd = openSync(path, 'w');
  try {
    for (const [part, times] of parts) {
      const unit = Buffer.from(part);
      const per = Math.max(1, Math.floor(MiB / unit.length));
      const block = Buffer.concat(Array.from({ length: Math.min(per, times) }, () => unit));
      let left = times;
      while (left > 0) {
        const n = Math.min(left, per);
        writeSync(fd, block, 0, n * unit.length);
        left -= n;
      }
    }
  } finally {
    closeSync(fd);
  }
}

const GiB = 1024 * MiB;
const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const CT = 'http://schemas.openxmlformats.org/package/2006/content-types';

/** A workbook's fixed parts around a sheet1.xml and sharedStrings.xml given as chunks. */
export function workbook(sheet: () => Iterable<Buffer | string>, shared: () => Iterable<Buffer | string>): ZipEntry[] {
  const xml = (text: string) => () => [`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${text}`];
  return [
    {
      name: '[Content_Types].xml',
      chunks: xml(
        `<Types xmlns="${CT}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
          '<Default Extension="xml" ContentType="application/xml"/>' +
          '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
          '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
          '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      chunks: xml(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
          `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
      ),
    },
    {
      name: 'xl/workbook.xml',
      chunks: xml(`<workbook xmlns="${NS}" xmlns:r="${REL}"><sheets><sheet name="Clients" sheetId="1" r:id="rId1"/></sheets></workbook>`),
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      chunks: xml(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
          `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
          `<Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
      ),
    },
    { name: 'xl/worksheets/sheet1.xml', chunks: sheet },
    { name: 'xl/sharedStrings.xml', chunks: shared },
  ];
}

const HEADER_CELLS = ['name', 'email', 'country', 'address'];
/** A header row of shared strings 0–3, then `rows`. */
function* sheetXml(rows: () => Iterable<Buffer | string> = () => []): Iterable<Buffer | string> {
  yield `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="${NS}"><sheetData><row r="1">`;
  yield HEADER_CELLS.map((_, i) => `<c r="${'ABCD'[i]}1" t="s"><v>${i}</v></c>`).join('');
  yield '</row>';
  yield* rows();
  yield '</sheetData></worksheet>';
}
function* sharedXml(extra: () => Iterable<Buffer | string> = () => []): Iterable<Buffer | string> {
  yield `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="${NS}">`;
  yield HEADER_CELLS.map((text) => `<si><t>${text}</t></si>`).join('');
  yield* extra();
  yield '</sst>';
}

/** A generator writing `write`'s workbook (test/workbook-bombs.ts) to `name` in `dir`. */
const bomb =
  (write: (path: string) => void) =>
  (dir: string, name: string): Generated => {
    const path = join(dir, name);
    write(path);
    return { path };
  };
const bytes = (make: () => Buffer | string) => bomb((path) => writeFileSync(path, make()));

export const generators: Record<string, (dir: string, name: string) => Generated> = {
  odsRepeatBomb: bomb((path) => writeOds(path, () => [odsBombs.repeats()])),
  odsColumnsBomb: bomb((path) => writeOds(path, () => [odsBombs.columns()])),
  odsSpacesBomb: bomb((path) => writeOds(path, () => [odsBombs.spaces()])),
  odsEndlessTag: bomb((path) => writeOds(path, odsEndlessTag)),
  xlsMergeBomb: bytes(xlsBombs.merges),
  xlsLabelBomb: bytes(xlsBombs.labels),
  xlsShortFormula: bytes(xlsBombs.shortFormula),
  xlsEmptyString: bytes(xlsBombs.emptyString),
  xlsSectorLoop: bytes(xlsBombs.cycle),
  xlsColumnSpan: bytes(textBombs.xmlSpan),
  xlsCellIndex: bytes(textBombs.xmlIndex),
  xlsColspan: bytes(textBombs.htmlWide),
  xlsxStylesBomb: bomb(xlsxBombs.styles),
  xlsxWorkbookBomb: bomb(xlsxBombs.workbook),
  xlsxEndlessTag: bomb(xlsxBombs.endlessTag),
  xlsxDimension: bomb(xlsxBombs.dimension),
  zipBombXlsx(dir, name) {
    // Not a workbook: one member of 1 GiB of zeros, ~1 MB on disk, named .xlsx.
    const path = join(dir, name);
    writeZip(path, [{ name: 'bomb.bin', chunks: () => repeated('\0', GiB) }]);
    return { path };
  },
  sheetBombXlsx(dir, name) {
    // A real workbook whose sheet XML is 1 GiB (rows of empty cells) around a valid header.
    const path = join(dir, name);
    writeZip(path, workbook(() => sheetXml(() => repeated('<row><c r="A2"/></row>', GiB)), () => sharedXml()));
    return { path };
  },
  sharedStrings1GiB(dir, name) {
    // The header's strings first, then 1 GiB of one shared string nobody uses.
    const path = join(dir, name);
    writeZip(
      path,
      workbook(
        () => sheetXml(),
        () => sharedXml(function* () {
          yield '<si><t>';
          yield* repeated('A', GiB);
          yield '</t></si>';
        }),
      ),
    );
    return { path };
  },
  sharedStringsMillions(dir, name) {
    // 1 GiB of small shared strings (tens of millions of entries).
    const path = join(dir, name);
    writeZip(path, workbook(() => sheetXml(), () => sharedXml(() => repeated('<si><t>x</t></si>', GiB))));
    return { path };
  },
  millionBlankLines(dir, name) {
    const path = join(dir, name);
    writeRepeated(path, [[HEADER, 1], ['\n', 1_000_000], [ROW, 1], ['\r\n', 1_000_000]]);
    return { path };
  },
  singleLine100MiB(dir, name) {
    const path = join(dir, name);
    writeRepeated(path, [[HEADER, 1], ['x', 100 * MiB]]);
    return { path };
  },
  nestedQuotes64MiB(dir, name) {
    const path = join(dir, name);
    writeRepeated(path, [[HEADER, 1], ['"', 1], ['""', 32 * MiB], ['",c@example.com,DE,x,EUR,2024-05-17\n', 1]]);
    return { path };
  },
  manyShortLines(dir, name) {
    // 20,000 one-field lines: every row invalid, none sent, memory flat.
    const path = join(dir, name);
    writeRepeated(path, [[HEADER, 1], ['x\n', 20_000]]);
    return { path };
  },
  wideHeader(dir, name) {
    const path = join(dir, name);
    writeRepeated(path, [[HEADER.trimEnd(), 1], [',extra', 300_000], ['\n', 1], [ROW, 1]]);
    return { path };
  },
  sparseNul1GiB(dir, name) {
    const path = join(dir, name);
    writeRepeated(path, [[HEADER, 1], [ROW, 1]]);
    execFileSync('truncate', ['-s', '1G', path]);
    return { path };
  },
  fifoNeverEnds(dir, name) {
    const path = join(dir, name);
    execFileSync('mkfifo', [path]);
    // A writer that holds the FIFO open and never writes: a reader would wait forever.
    const writer = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    return { path, cleanup: () => closeSync(writer) };
  },
  devZeroLink(dir, name) {
    const path = join(dir, name);
    symlinkSync('/dev/zero', path);
    return { path };
  },
  directory(dir, name) {
    const path = join(dir, name);
    mkdirSync(path);
    return { path };
  },
  noReadPermission(dir, name) {
    // Root reads a 0000 file anyway: the CLI runs as nobody, in a dir nobody may write to, in a
    // place nobody can reach (the test's temp dir may sit under a 0700 TMPDIR).
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
    const cli = asNobody && cliForUser(asNobody.uid, asNobody.gid);
    if (cli && 'skip' in cli) return { path: '', skip: cli.skip };
    const home = join(cli ? mkdtempSync(join(cli.base, 'input-')) : dir, 'nobody');
    if (cli) chmodSync(dirname(home), 0o755);
    mkdirSync(home, { mode: 0o777 });
    chmodSync(home, 0o777);
    const path = join(home, name);
    writeRepeated(path, [[HEADER, 1], [ROW, 1]]);
    chmodSync(path, 0o000);
    return { path, ...asNobody, ...(cli && { bin: cli.bin }) };
  },
};
