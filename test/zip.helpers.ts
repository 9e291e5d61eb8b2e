/**
 * A minimal zip writer for hostile workbooks: deflated entries whose content is produced in
 * chunks, so a member of a gigabyte uncompressed is written without holding it (its
 * compressed form is a few MB).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { centralRecord, endRecord, localHeader } from '../src/import/fix-it/zip-records.js';

export interface ZipEntry {
  name: string;
  /** The uncompressed content, chunk by chunk (a chunk given is not changed after). */
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
      const record = { name: Buffer.from(entry.name, 'utf8'), offset, crc, compressed: data.length, size };
      write(localHeader(record, 0));
      write(data);
      central.push(centralRecord(record, 0));
    }
    const start = offset;
    for (const part of central) write(part);
    write(endRecord(entries.length, start, offset - start));
  } finally {
    closeSync(fd);
  }
}

/** The most input deflated as one run: small chunks (a row each) are gathered up to it. */
const RUN_BYTES = 1024 * 1024;

/**
 * Raw deflate of the chunks. Chunks are gathered into runs of up to RUN_BYTES, each deflated
 * on its own (Z_FULL_FLUSH keeps the stream continuous), so memory holds one run and the
 * compressed output only. A run's output depends on its input alone: a run equal to the one
 * before reuses its output, so a gigabyte of one repeated unit costs its CRC and one run's
 * compression, not a gigabyte's.
 */
function deflate(chunks: Iterable<Buffer | string>): { data: Buffer; crc: number; size: number } {
  const parts: Buffer[] = [];
  let crc = 0;
  let size = 0;
  let repeat: { input: Buffer; output: Buffer } | undefined;
  const flush = (input: Buffer, last: boolean) => {
    crc = crc32(input, crc);
    size += input.length;
    if (!last && repeat?.input.equals(input)) {
      parts.push(repeat.output);
      return;
    }
    const output = deflateRawSync(input, { level: 9, finishFlush: last ? constants.Z_FINISH : constants.Z_FULL_FLUSH });
    if (!last) repeat = { input, output };
    parts.push(output);
  };
  // The run being gathered, and the one before it (deflated once it is known not to be the last).
  let gathered: Buffer[] = [];
  let gatheredBytes = 0;
  let ready: Buffer | undefined;
  const take = () => {
    if (ready) flush(ready, false);
    ready = gathered.length === 1 ? gathered[0]! : Buffer.concat(gathered);
    gathered = [];
    gatheredBytes = 0;
  };
  for (const raw of chunks) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    if (gatheredBytes > 0 && gatheredBytes + chunk.length > RUN_BYTES) take();
    gathered.push(chunk);
    gatheredBytes += chunk.length;
  }
  if (gathered.length > 0) take();
  flush(ready ?? Buffer.alloc(0), true);
  return { data: Buffer.concat(parts), crc: crc >>> 0, size };
}

/** `unit` repeated to `total` bytes, in 1 MiB chunks. */
export function* repeated(unit: string, total: number): Iterable<Buffer> {
  const one = Buffer.from(unit, 'utf8');
  const block = Buffer.alloc(Math.max(one.length, Math.floor((1024 * 1024) / one.length) * one.length));
  for (let i = 0; i < block.length; i += one.length) one.copy(block, i);
  for (let left = total; left > 0; left -= block.length) yield left >= block.length ? block : block.subarray(0, left);
}
