/**
 * The held file: the service's people as the held e-mails learned them, kept between runs so a
 * repeat run lists only the clients created since. One private (0600) text file, appended to
 * and never rewritten:
 *
 *   {"held_emails":1,"service":"https://ccs.example.com","account":"3f9a…"}   who it is for
 *   p,<16 hex digits>,<client id, URI-encoded>                                 a person's client
 *   n,<created_at>                                                             a listing reached its end
 *
 * The person is a 64-bit print of the normalized e-mail: the file holds no e-mail. A listing
 * cut short (Ctrl-C, a crash) leaves its clients without a closing `n` line: the next run lists
 * from the last `n` again and knows those clients by their id. A file for another service or
 * token, or one that is not ours or not this format, is refused by name, never half-used.
 */
import { closeSync, constants, fstatSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { UsageError } from '../../errors.js';
import type { Print } from '../../infra/fingerprints.js';
import { type FileLock, LockedError, lockFile } from '../../infra/lock.js';
import { assertOwnExisting, assertOwnFile, createPrivate, refuseLink, writeFully } from '../../infra/output-files.js';
import { shownPath } from '../../infra/printable.js';

const VERSION = 1;
const READ_CHUNK = 1 << 20;
/** Appends are written a page at a time, or sooner past this many bytes. */
const FLUSH_BYTES = 1 << 16;

export interface HeldFile {
  /** The file's lines, estimated from its size: the print table is sized once. */
  readonly entries: number;
  /** The newest `created_at` a finished listing saw, if any. */
  readonly newest: string | undefined;
  /** Where the next appended client's id will start. */
  readonly nextAt: number;
  /** Each client in the file, with where its id starts; returns how many. */
  load(each: (person: Print, id: string, at: number) => void): number;
  idAt(at: number): string;
  append(person: Print, id: string): void;
  /** A listing reached its end: its newest `created_at` is where the next one starts. */
  finish(newest: string | undefined): void;
  close(): void;
}

/**
 * The held file of a service and token: one per pair in the user's cache folder
 * ($XDG_CACHE_HOME/ccs-bulk, else ~/.cache/ccs-bulk), named by a hash of the two (the token
 * itself is never written).
 */
export function defaultHeldCache(serviceIdentity: string, account: string | undefined, env = process.env): string {
  const root = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/') ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  const name = createHash('sha256').update(`${serviceIdentity}\u0000${account ?? ''}`).digest('hex').slice(0, 24);
  return join(root, 'ccs-bulk', `held-emails-${name}.txt`);
}

/** `path` undefined: a file for this run alone, in a private temp folder removed on close. */
export function openHeldFile(path: string | undefined, service: string, account: string | undefined): HeldFile {
  if (path === undefined) {
    const folder = mkdtempSync(join(tmpdir(), 'ccs-bulk-held-'));
    const removeFolder = () => rmSync(folder, { recursive: true, force: true });
    try {
      return openOwned(join(folder, 'held.txt'), service, account, { release: removeFolder });
    } catch (error) {
      removeFolder();
      throw error;
    }
  }
  const folder = join(path, '..');
  refuseLink(folder);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  let lock: FileLock;
  try {
    lock = lockFile(path);
  } catch (error) {
    // A sibling shard lists the same service now: this run keeps its own for once.
    if (error instanceof LockedError) return openHeldFile(undefined, service, account);
    throw error;
  }
  try {
    return openOwned(path, service, account, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** `lock`: released on close (the held file's lock, or the temp folder's removal). */
function openOwned(path: string, service: string, account: string | undefined, lock: Pick<FileLock, 'release'> | undefined): HeldFile {
  assertOwnExisting(path);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw refused(path, `it cannot be opened (${(error as NodeJS.ErrnoException).code})`);
    const created = createPrivate(path);
    try {
      writeFully(created, `${JSON.stringify({ held_emails: VERSION, service, account: account ?? null })}\n`, path);
    } finally {
      closeSync(created);
    }
    fd = openSync(path, constants.O_RDWR | (constants.O_NOFOLLOW ?? 0));
  }
  try {
    assertOwnFile(path, fstatSync(fd));
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return new TextHeldFile(path, fd, service, account, lock);
}

function refused(path: string, why: string): UsageError {
  return new UsageError(
    `held e-mails file ${shownPath(path)}: ${why}; remove it (it is rebuilt from the service), or name another with --held-cache`,
    'held_cache_refused',
  );
}

class TextHeldFile implements HeldFile {
  readonly #path: string;
  readonly #fd: number;
  readonly #lock: Pick<FileLock, 'release'> | undefined;
  #size: number;
  #pending: string[] = [];
  #pendingBytes = 0;
  #newest: string | undefined;
  #headerBytes = 0;

  constructor(path: string, fd: number, service: string, account: string | undefined, lock: Pick<FileLock, 'release'> | undefined) {
    this.#path = path;
    this.#fd = fd;
    this.#lock = lock;
    this.#size = fstatSync(fd).size;
    this.#checkHeader(service, account);
  }

  get entries(): number {
    return Math.ceil((this.#size - this.#headerBytes) / 40);
  }

  get newest(): string | undefined {
    return this.#newest;
  }

  get nextAt(): number {
    return this.#size + this.#pendingBytes + 19;
  }

  #checkHeader(service: string, account: string | undefined): void {
    const first = this.#readLine(0);
    let header: { held_emails?: unknown; service?: unknown; account?: unknown } | undefined;
    try {
      header = first === undefined ? undefined : (JSON.parse(first.text) as typeof header);
    } catch {
      header = undefined;
    }
    if (header?.held_emails !== VERSION) throw refused(this.#path, 'it is not a held e-mails file of this version');
    if (header.service !== service) throw refused(this.#path, `it was made for another service (${String(header.service)})`);
    if ((header.account ?? undefined) !== account) throw refused(this.#path, 'it was made with another token of this service');
    this.#headerBytes = first!.end + 1;
  }

  load(each: (person: Print, id: string, at: number) => void): number {
    let count = 0;
    let position = this.#headerBytes;
    let rest = '';
    let restAt = position;
    const buffer = Buffer.allocUnsafe(READ_CHUNK);
    for (;;) {
      const read = readSync(this.#fd, buffer, 0, buffer.length, position);
      if (read === 0) break;
      const text = rest + buffer.toString('latin1', 0, read);
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        count += this.#entry(text.slice(start, end), restAt + start, each);
        start = end + 1;
      }
      restAt += start;
      rest = text.slice(start);
      position += read;
    }
    // A line cut short by a crash: dropped, so the next append starts a line of its own.
    if (rest !== '') {
      ftruncateSync(this.#fd, restAt);
      this.#size = restAt;
    }
    return count;
  }

  #entry(line: string, at: number, each: (person: Print, id: string, at: number) => void): number {
    if (line.startsWith('p,') && line.charCodeAt(18) === 0x2c) {
      const hi = Number.parseInt(line.slice(2, 10), 16);
      const lo = Number.parseInt(line.slice(10, 18), 16);
      if (!Number.isNaN(hi) && !Number.isNaN(lo)) {
        each({ hi, lo }, decodeURIComponent(line.slice(19)), at + 19);
        return 1;
      }
    } else if (line.startsWith('n,') && !Number.isNaN(Date.parse(line.slice(2)))) {
      this.#newest = line.slice(2);
      return 0;
    }
    throw refused(this.#path, `a line at byte ${at} is not in this format`);
  }

  idAt(at: number): string {
    this.#flush();
    const line = this.#readLine(at);
    if (line === undefined) throw refused(this.#path, `no client id at byte ${at}`);
    return decodeURIComponent(line.text);
  }

  append(person: Print, id: string): void {
    const line = `p,${hex8(person.hi)}${hex8(person.lo)},${encodeURIComponent(id)}\n`;
    this.#pending.push(line);
    this.#pendingBytes += Buffer.byteLength(line, 'latin1');
    if (this.#pendingBytes >= FLUSH_BYTES) this.#flush();
  }

  finish(newest: string | undefined): void {
    if (newest !== undefined && newest !== this.#newest) {
      this.#pending.push(`n,${newest}\n`);
      this.#newest = newest;
    }
    this.#flush();
  }

  close(): void {
    this.#flush();
    closeSync(this.#fd);
    this.#lock?.release();
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.join('');
    this.#pending = [];
    this.#pendingBytes = 0;
    const bytes = Buffer.from(text, 'latin1');
    let written = 0;
    while (written < bytes.length) written += writeSync(this.#fd, bytes, written, bytes.length - written, this.#size + written);
    this.#size += bytes.length;
  }

  /** The line starting at `at` (without its newline), read in small pieces. */
  #readLine(at: number): { text: string; end: number } | undefined {
    const pieces: Buffer[] = [];
    for (let position = at; ; ) {
      const piece = Buffer.allocUnsafe(256);
      const read = readSync(this.#fd, piece, 0, piece.length, position);
      if (read === 0) return undefined;
      const newline = piece.indexOf(0x0a);
      if (newline !== -1 && newline < read) {
        pieces.push(piece.subarray(0, newline));
        return { text: Buffer.concat(pieces).toString('utf8'), end: position + newline };
      }
      pieces.push(piece.subarray(0, read));
      position += read;
    }
  }
}

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
