/**
 * The streams of an OLE compound file ([MS-CFB]: an .xls's container, and an encrypted
 * .xlsx's), read from its bytes. A sector chain is followed no further than its stream's size
 * and refused when it comes back to a sector (SheetJS's reader went round such a loop until
 * memory ran out): what is read is, at most, the file's own bytes.
 */

const SIGNATURE = Buffer.from('d0cf11e0a1b11ae1', 'hex');
const END_OF_CHAIN = 0xfffffffe;
const MINI_SECTOR = 64;
const ENTRY_BYTES = 128;
/** Streams under this size live in the mini stream, in 64-byte sectors. */
const MINI_CUTOFF = 4096;

export interface CompoundEntry {
  name: string;
  /** 1 storage, 2 stream, 5 root. */
  type: number;
  start: number;
  size: number;
}

export interface CompoundFile {
  entries: CompoundEntry[];
  /** The first stream of that name (ignoring case), or undefined. */
  stream(name: string): Buffer | undefined;
}

/** The file's sectors after its header: `at(i)` is sector i (the last may be short). */
interface Sectors {
  size: number;
  count: number;
  at(index: number): Buffer;
}

/** Throws an Error saying what is wrong when `bytes` is not a compound file. */
export function readCompoundFile(bytes: Buffer): CompoundFile {
  const sectors = readSectors(bytes);
  const fat = readFat(bytes, sectors);
  const fileChain = (start: number, limit: number) => chain(fat, start, sectors.count, sectors.at, sectors.size, limit);
  const entries = readEntries(fileChain(bytes.readUInt32LE(0x30), bytes.length));

  const root = entries.find((entry) => entry.type === 5);
  let mini: { fat: Uint32Array; data: Buffer } | undefined;
  const miniStream = () => {
    if (mini !== undefined) return mini;
    const data = root === undefined ? Buffer.alloc(0) : fileChain(root.start, root.size);
    const table = fileChain(bytes.readUInt32LE(0x3c), bytes.readUInt32LE(0x40) * sectors.size);
    const miniFat = new Uint32Array(Math.floor(table.length / 4));
    for (let i = 0; i < miniFat.length; i++) miniFat[i] = table.readUInt32LE(i * 4);
    mini = { fat: miniFat, data };
    return mini;
  };

  return {
    entries,
    stream(name) {
      const wanted = name.toLowerCase();
      const entry = entries.find((candidate) => candidate.type === 2 && candidate.name.toLowerCase() === wanted);
      if (entry === undefined) return undefined;
      const limit = Math.min(entry.size, bytes.length);
      if (entry.size >= MINI_CUTOFF) return fileChain(entry.start, limit);
      const { fat: miniFat, data } = miniStream();
      const count = Math.ceil(data.length / MINI_SECTOR);
      return chain(miniFat, entry.start, count, (index) => data.subarray(index * MINI_SECTOR, (index + 1) * MINI_SECTOR), MINI_SECTOR, limit);
    },
  };
}

/** The header's signature and version checked, the sectors it says the file is cut into. */
function readSectors(bytes: Buffer): Sectors {
  if (bytes.length < 512 || !bytes.subarray(0, 8).equals(SIGNATURE)) throw new Error('not an OLE compound file');
  const major = bytes.readUInt16LE(0x1a);
  const shift = bytes.readUInt16LE(0x1e);
  if (!((major === 3 && shift === 9) || (major === 4 && shift === 12))) {
    throw new Error(`unknown compound file version ${major} (sector shift ${shift})`);
  }
  const size = 1 << shift;
  return {
    size,
    count: Math.ceil((bytes.length - size) / size),
    at: (index) => bytes.subarray((index + 1) * size, (index + 2) * size),
  };
}

/** The file allocation table: for each sector, the next of its chain. */
function readFat(bytes: Buffer, sectors: Sectors): Uint32Array {
  const valid = (index: number) => index < sectors.count;
  // The FAT's own sectors: 109 listed in the header, the rest in a chain of DIFAT sectors.
  const fatSectors: number[] = [];
  for (let i = 0; i < 109; i++) {
    const index = bytes.readUInt32LE(0x4c + i * 4);
    if (valid(index)) fatSectors.push(index);
  }
  const perSector = sectors.size / 4;
  const seenDifat = new Set<number>();
  for (let index = bytes.readUInt32LE(0x44); valid(index) && !seenDifat.has(index) && fatSectors.length < sectors.count; ) {
    seenDifat.add(index);
    const difat = sectors.at(index);
    for (let i = 0; i < perSector - 1 && (i + 1) * 4 <= difat.length; i++) {
      const entry = difat.readUInt32LE(i * 4);
      if (valid(entry)) fatSectors.push(entry);
    }
    index = difat.length >= sectors.size ? difat.readUInt32LE(sectors.size - 4) : END_OF_CHAIN;
  }
  // More FAT sectors than sectors can only repeat some: the FAT is the file's size at most.
  const fat = new Uint32Array(Math.min(fatSectors.length, sectors.count) * perSector).fill(END_OF_CHAIN);
  for (let f = 0; f * perSector < fat.length; f++) {
    const data = sectors.at(fatSectors[f]!);
    for (let i = 0; i < perSector && (i + 1) * 4 <= data.length; i++) fat[f * perSector + i] = data.readUInt32LE(i * 4);
  }
  return fat;
}

/** The bytes of the chain from `start`, at most `limit` of them; a chain that loops is refused. */
function chain(table: Uint32Array, start: number, count: number, read: (index: number) => Buffer, unit: number, limit: number): Buffer {
  const parts: Buffer[] = [];
  const seen = new Uint8Array(count);
  let length = 0;
  for (let index = start; index < count && length < limit; index = index < table.length ? table[index]! : END_OF_CHAIN) {
    if (seen[index] === 1) throw new Error('the sectors of a stream loop back on themselves');
    seen[index] = 1;
    const part = read(index);
    parts.push(part);
    length += part.length;
    if (part.length < unit) break;
  }
  const joined = Buffer.concat(parts);
  return joined.length > limit ? joined.subarray(0, limit) : joined;
}

/** The directory's storages and streams (unused entries left out). */
function readEntries(directory: Buffer): CompoundEntry[] {
  const entries: CompoundEntry[] = [];
  for (let at = 0; at + ENTRY_BYTES <= directory.length; at += ENTRY_BYTES) {
    const nameBytes = Math.min(directory.readUInt16LE(at + 0x40), 64);
    const type = directory[at + 0x42]!;
    if (type === 0) continue;
    entries.push({
      name: directory.toString('utf16le', at, at + Math.max(0, nameBytes - 2)),
      type,
      start: directory.readUInt32LE(at + 0x74),
      // Version 3 files keep garbage in the size's high half; no stream here is past 4 GB.
      size: directory.readUInt32LE(at + 0x78),
    });
  }
  return entries;
}
