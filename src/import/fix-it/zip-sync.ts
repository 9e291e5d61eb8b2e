/**
 * A zip written synchronously, entry after entry, with flat memory: the --failed file is
 * written row by row from synchronous code (the recorder), like the CSV it replaces. Each
 * 64 KiB of an entry is deflated on its own and ended with a sync flush, so the pieces join
 * into one valid deflate stream, closed by an empty final block; CRC and sizes follow the
 * data (data descriptors). No ZIP64: the caller stays under 4 GiB.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { writeFully } from '../../infra/output-files.js';
import { centralRecord, dataDescriptor, endRecord, localHeader, type ZipEntryRecord as Entry } from './zip-records.js';

const CHUNK = 1 << 16;
const FLAGS = 0x0808; // sizes in a data descriptor; names in UTF-8
const FINAL_BLOCK = deflateRawSync(Buffer.alloc(0));

export interface SyncZip {
  /** Starts an entry; text written until the next begin/finish goes into it. */
  begin(name: string): void;
  write(text: string): void;
  /** Copies a whole file into a new entry, a chunk at a time. */
  copyFile(name: string, path: string): void;
  /** Ends the last entry and writes the central directory. */
  finish(): void;
}

/** `path` names the file in a write failure's message. */
export function syncZip(fd: number, path: string): SyncZip {
  const entries: Entry[] = [];
  let offset = 0;
  let current: Entry | undefined;
  let pending: string[] = [];
  let pendingLength = 0;

  const out = (bytes: Uint8Array) => {
    writeFully(fd, bytes, path);
    offset += bytes.length;
  };
  const deflate = (data: Buffer) => {
    const entry = current!;
    entry.crc = crc32(data, entry.crc);
    entry.size += data.length;
    const packed = deflateRawSync(data, { finishFlush: constants.Z_SYNC_FLUSH });
    entry.compressed += packed.length;
    out(packed);
  };
  const flush = () => {
    if (pendingLength === 0) return;
    deflate(Buffer.from(pending.join(''), 'utf8'));
    [pending, pendingLength] = [[], 0];
  };
  const end = () => {
    if (current === undefined) return;
    flush();
    current.compressed += FINAL_BLOCK.length;
    out(FINAL_BLOCK);
    out(dataDescriptor(current));
    current = undefined;
  };
  const begin = (name: string) => {
    end();
    const entry: Entry = { name: Buffer.from(name, 'utf8'), offset, crc: 0, compressed: 0, size: 0 };
    out(localHeader(entry, FLAGS));
    entries.push(entry);
    current = entry;
  };
  return {
    begin,
    write(text) {
      pending.push(text);
      pendingLength += text.length;
      if (pendingLength >= CHUNK) flush();
    },
    copyFile(name, path) {
      begin(name);
      const input = openSync(path, 'r');
      try {
        const buffer = Buffer.alloc(CHUNK);
        for (let n = readSync(input, buffer); n > 0; n = readSync(input, buffer)) deflate(buffer.subarray(0, n));
      } finally {
        closeSync(input);
      }
    },
    finish() {
      end();
      const start = offset;
      for (const entry of entries) out(centralRecord(entry, FLAGS));
      out(endRecord(entries.length, start, offset - start));
    },
  };
}
