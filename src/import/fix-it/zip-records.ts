/**
 * The records of a plain ZIP file (APPNOTE 4.3): an entry's local header, its central-directory
 * record and the end record, for deflated entries and no ZIP64. Every number is little-endian;
 * fields a writer leaves at zero (extra fields, comments, disk numbers, attributes) are written
 * as zeros.
 */

/** Version 2.0 (deflate) as the version made by and the version needed to extract. */
const VERSION = 20;
const DEFLATED = 8;
/** 1980-01-01 00:00 in DOS format: a fixed stamp keeps the output reproducible. */
const [DOS_TIME, DOS_DATE] = [0, 0x21];

export interface ZipEntryRecord {
  /** The name as written (UTF-8 when the flags say so). */
  name: Buffer;
  /** Where the entry's local header starts. */
  offset: number;
  crc: number;
  compressed: number;
  size: number;
}

const u16 = (value: number) => {
  const field = Buffer.alloc(2);
  field.writeUInt16LE(value);
  return field;
};

const u32 = (value: number) => {
  const field = Buffer.alloc(4);
  field.writeUInt32LE(value);
  return field;
};

/** The local header and the name; `flags` are the general-purpose bits. */
export function localHeader(entry: ZipEntryRecord, flags: number): Buffer {
  return Buffer.concat([
    u32(0x04034b50), u16(VERSION), u16(flags), u16(DEFLATED), u16(DOS_TIME), u16(DOS_DATE),
    ...sizes(entry), u16(entry.name.length), u16(0), // no extra field
    entry.name,
  ]);
}

/** What follows an entry's data when the flags say its CRC and sizes come after it (0x0008). */
export function dataDescriptor(entry: ZipEntryRecord): Buffer {
  return Buffer.concat([u32(0x08074b50), ...sizes(entry)]);
}

/** The central-directory record and the name. */
export function centralRecord(entry: ZipEntryRecord, flags: number): Buffer {
  return Buffer.concat([
    u32(0x02014b50), u16(VERSION), u16(VERSION), u16(flags), u16(DEFLATED), u16(DOS_TIME), u16(DOS_DATE),
    ...sizes(entry), u16(entry.name.length), u16(0), u16(0), // no extra field, no comment
    u16(0), u16(0), u32(0), u32(entry.offset), // disk 0, no attributes
    entry.name,
  ]);
}

/** The end record: `count` entries whose central directory is `length` bytes from `start`. */
export function endRecord(count: number, start: number, length: number): Buffer {
  return Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(count), u16(count), u32(length), u32(start), u16(0)]);
}

/** CRC, compressed and uncompressed size, as every record but the end one has them. */
function sizes(entry: ZipEntryRecord): Buffer[] {
  // `>>> 0`: a CRC computed as a signed 32-bit number is written as the unsigned one it stands for.
  return [u32(entry.crc >>> 0), u32(entry.compressed), u32(entry.size)];
}
