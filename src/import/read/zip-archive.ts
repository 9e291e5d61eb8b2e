/**
 * A zip archive read through its central directory (yauzl): entries are found by name
 * wherever the producer stored them, and each is inflated on demand. No single pass over
 * local headers, so no entry can be missed because of the order it was written in.
 */
import { pipeline, type Readable, Transform } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { InputError } from '../../errors.js';
import { printable, shownPath } from '../../infra/printable.js';
import { formatBytes } from './explain-csv-error.js';

/**
 * Inflated bytes per chunk. yauzl inflates 16 KiB at a time (it has no option for more): on a
 * 270 MB sheet that is 17,000 rounds of zlib callbacks, stream hops and text decodes.
 */
const INFLATE_CHUNK = 64 * 1024;

export interface ZipArchive {
  /** The entry of that name; ZIP names are matched exactly, then ignoring case and `\`. */
  entry(name: string): Entry | undefined;
  /** The inflated bytes of `entry`, streamed. */
  open(entry: Entry): Promise<Readable>;
  close(): void;
}

export async function openZip(file: string): Promise<ZipArchive> {
  const zip = await new Promise<ZipFile>((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true }, (error, opened) =>
      error ? reject(error) : resolve(opened),
    );
  });
  const byName = new Map<string, Entry>();
  const byLooseName = new Map<string, Entry>();
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: Entry) => {
        byName.set(entry.fileName, entry);
        byLooseName.set(loose(entry.fileName), entry);
        zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', reject);
      zip.readEntry();
    });
  } catch (error) {
    zip.close();
    throw error;
  }
  return {
    entry: (name) => byName.get(name) ?? byLooseName.get(loose(name)),
    open: (entry) =>
      new Promise((resolve, reject) => {
        // A deflated entry is read raw and inflated here, in larger chunks; any other (stored,
        // encrypted, another method) goes through yauzl as before, with its checks and errors.
        const raw = entry.compressionMethod === 8 && !entry.isEncrypted();
        zip.openReadStream(entry, raw ? { decodeFileData: false } : {}, (error, stream) =>
          error ? reject(error) : resolve(raw ? inflate(stream, entry.uncompressedSize) : stream),
        );
      }),
    close: () => zip.close(),
  };
}

/**
 * `deflated` inflated, checked to come to `size` bytes as the central directory says (yauzl's
 * validateEntrySizes, kept): a zip bomb cannot lie about its size to pass the reader's bounds.
 */
function inflate(deflated: Readable, size: number): Readable {
  let bytes = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(bytes > size ? new Error(`too many bytes in the stream. expected ${size}. got at least ${bytes}`) : null, chunk);
    },
    flush(done) {
      done(bytes < size ? new Error(`not enough bytes in the stream. expected ${size}. got only ${bytes}`) : null);
    },
  });
  // An error anywhere destroys the three with it; the caller sees it on `counted`.
  pipeline(deflated, createInflateRaw({ chunkSize: INFLATE_CHUNK }), counted, () => {});
  return counted;
}

const loose = (name: string) => name.replace(/\\/g, '/').replace(/^\//, '').toLowerCase();

/**
 * The most a part read whole may inflate to: a workbook's list of sheets, its relationships, an
 * .ods manifest. Real ones are kilobytes (a workbook with thousands of defined names, a few MB);
 * a few MB of zip can inflate to gigabytes.
 */
export const MAX_PART_BYTES = 16 * 1024 * 1024;

/**
 * Refuses `entry` when its central directory says it inflates past `limit`, before a byte is
 * inflated: that size is the one inflate() holds the entry to, so it cannot be understated.
 */
export function checkPartSize(entry: Entry, file: string, limit: number): void {
  if (entry.uncompressedSize <= limit) return;
  throw new InputError(
    `${shownPath(file)}: its part ${printable(entry.fileName)} inflates to ${(entry.uncompressedSize / 1_048_576).toFixed(1)} MiB, past the ${formatBytes(limit)} such a part may hold: too much to read from a workbook safely; save it as .csv`,
    'input_too_large',
    { file },
  );
}

/** A whole (small) entry as text, within MAX_PART_BYTES: the workbook, its relationships. */
export async function readText(zip: ZipArchive, entry: Entry, file: string): Promise<string> {
  checkPartSize(entry, file, MAX_PART_BYTES);
  const chunks: Buffer[] = [];
  for await (const chunk of await zip.open(entry)) chunks.push(chunk as Buffer);
  return new TextDecoder().decode(Buffer.concat(chunks));
}
