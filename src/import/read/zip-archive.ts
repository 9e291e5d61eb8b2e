/**
 * A zip archive read through its central directory (yauzl): entries are found by name
 * wherever the producer stored them, and each is inflated on demand. No single pass over
 * local headers, so no entry can be missed because of the order it was written in.
 */
import type { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';

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
        zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream)));
      }),
    close: () => zip.close(),
  };
}

const loose = (name: string) => name.replace(/\\/g, '/').replace(/^\//, '').toLowerCase();

/** A whole (small) entry as text: the workbook, its relationships, its styles. */
export async function readText(zip: ZipArchive, entry: Entry): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await zip.open(entry)) chunks.push(chunk as Buffer);
  return new TextDecoder().decode(Buffer.concat(chunks));
}
