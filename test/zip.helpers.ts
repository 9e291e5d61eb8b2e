/**
 * A minimal zip writer for hostile workbooks: deflated entries whose content is produced in
 * chunks, so a member of a gigabyte uncompressed is written without holding it (its
 * compressed form is a few MB).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { constants, crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  /** The uncompressed content, chunk by chunk. */
  chunks: () => Iterable<Buffer | string>;
}

/** Writes a zip of deflated entries to `path` (no zip64: each entry under 4 GiB). */
export function writeZip(path: string, entries: ZipEntry[]): void {
  const fd = openSync(path, 'w');
  const central: Buffer[] = [];
  let offset = 0;
  const write = (buffer: Buffer) => {
    writeSync(fd, buffer);
    offset += buffer.length;
  };
  try {
    for (const entry of entries) {
      const { data, crc, size } = deflate(entry.chunks());
      const name = Buffer.from(entry.name, 'utf8');
      const at = offset;
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(8, 8);
      local.writeUInt16LE(0x21, 12);
      local.writeUInt32LE(crc, 14);
      local.writeUInt32LE(data.length, 18);
      local.writeUInt32LE(size, 22);
      local.writeUInt16LE(name.length, 26);
      write(local);
      write(name);
      write(data);
      const header = Buffer.alloc(46);
      header.writeUInt32LE(0x02014b50, 0);
      header.writeUInt16LE(20, 4);
      header.writeUInt16LE(20, 6);
      header.writeUInt16LE(8, 10);
      header.writeUInt16LE(0x21, 14);
      header.writeUInt32LE(crc, 16);
      header.writeUInt32LE(data.length, 20);
      header.writeUInt32LE(size, 24);
      header.writeUInt16LE(name.length, 28);
      header.writeUInt32LE(at, 42);
      central.push(header, name);
    }
    const start = offset;
    for (const part of central) write(part);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(entries.length, 8);
    end.writeUInt16LE(entries.length, 10);
    end.writeUInt32LE(offset - start, 12);
    end.writeUInt32LE(start, 16);
    write(end);
  } finally {
    closeSync(fd);
  }
}

/**
 * Raw deflate of the chunks. Each chunk is deflated as its own block run (Z_FULL_FLUSH keeps
 * the stream continuous), so memory holds one chunk and the compressed output only. A run
 * depends on its chunk alone: a chunk equal to the one before reuses its run, so a gigabyte of
 * one repeated unit costs its CRC and one chunk's compression, not a gigabyte's.
 */
function deflate(chunks: Iterable<Buffer | string>): { data: Buffer; crc: number; size: number } {
  const parts: Buffer[] = [];
  let crc = 0;
  let size = 0;
  let previous: Buffer | undefined;
  let repeat: { chunk: Buffer; run: Buffer } | undefined;
  const flush = (chunk: Buffer, last: boolean) => {
    crc = crc32(chunk, crc);
    size += chunk.length;
    if (!last && repeat?.chunk.equals(chunk)) {
      parts.push(repeat.run);
      return;
    }
    const run = deflateRawSync(chunk, { level: 9, finishFlush: last ? constants.Z_FINISH : constants.Z_FULL_FLUSH });
    // A copy: a producer may refill the same buffer for its next chunk.
    if (!last) repeat = { chunk: Buffer.from(chunk), run };
    parts.push(run);
  };
  for (const raw of chunks) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    if (previous) flush(previous, false);
    previous = chunk;
  }
  flush(previous ?? Buffer.alloc(0), true);
  return { data: Buffer.concat(parts), crc: crc >>> 0, size };
}

/** `unit` repeated to `total` bytes, in 1 MiB chunks. */
export function* repeated(unit: string, total: number): Iterable<Buffer> {
  const one = Buffer.from(unit, 'utf8');
  const block = Buffer.alloc(Math.max(one.length, Math.floor((1024 * 1024) / one.length) * one.length));
  for (let i = 0; i < block.length; i += one.length) one.copy(block, i);
  for (let left = total; left > 0; left -= block.length) yield left >= block.length ? block : block.subarray(0, left);
}
