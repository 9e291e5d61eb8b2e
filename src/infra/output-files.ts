/**
 * The import's output files: private (0600), never written through a link or into a file the
 * run did not make (a new file, or a new one renamed over the old), written whole (a short
 * write is finished, never left as a torn line), and never the input itself.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError, OutputError, UsageError } from '../errors.js';
import { type FileLock, LockedError, lockFile } from './lock.js';
import { ownerOf, shownPath } from './printable.js';
import { tempBeside } from './temp-files.js';
import type { ByteRange } from '../import/read/types.js';

/** One run per output file: a file held by a live run is refused (exit 2), naming that run. */
export function lockOutput(path: string, what: string): FileLock {
  try {
    return lockFile(path);
  } catch (error) {
    if (error instanceof LockedError) throw new UsageError(`${what} ${path}: ${error.message}`, 'output_locked');
    throw new UsageError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`, 'output_unwritable');
  }
}

/**
 * Opens a file this run makes itself: created new (O_EXCL, which never follows a link, even
 * one to a file that does not exist yet), private (0600), for writing.
 */
export function createPrivate(path: string): number {
  try {
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
    // The umask may have taken bits away from 0600 (a 0400 file could not be appended to again).
    fchmodSync(fd, 0o600);
    return fd;
  } catch (error) {
    throw cannotWrite(path, error);
  }
}

/**
 * A file rewritten whole by each run (a results file started afresh, the --failed file, the
 * fix-it workbook): made new and private at a hidden name beside it, then renamed over `path`.
 * Whatever stood at `path` is replaced, never written into or re-moded: a link planted there
 * is refused, and a file of another user in a shared folder (sticky bit) cannot be replaced.
 */
export function replacePrivate(path: string): number {
  refuseLink(path);
  const temp = tempBeside(path);
  const fd = createPrivate(temp);
  try {
    renameSync(temp, path);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw cannotWrite(path, error);
  }
  return fd;
}

/**
 * Opens `path` to append to it (the log): created new when absent; otherwise only a regular
 * file of the running user with no other name (a hard link would make another file grow), and
 * never through a link.
 */
export function appendPrivate(path: string): number {
  refuseLink(path);
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW, 0o600);
  } catch (error) {
    throw cannotWrite(path, error);
  }
  try {
    assertOwnFile(path, fstatSync(fd));
    fchmodSync(fd, 0o600);
  } catch (error) {
    closeSync(fd);
    throw error instanceof UsageError ? error : cannotWrite(path, error);
  }
  return fd;
}

/** Linux and macOS have it; elsewhere links are checked with lstat before opening. */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** The running user's id (POSIX), or undefined where the platform has none. */
const ownUid = process.getuid?.();

/** A regular file, owned by the running user, with one name; else an `output_foreign` refusal. */
export function assertOwnFile(path: string, stats: Stats): void {
  if (!stats.isFile()) throw new UsageError(`cannot write ${shownPath(path)}: it is not a regular file`, 'output_foreign');
  if (ownUid !== undefined && stats.uid !== ownUid) {
    throw new UsageError(
      `cannot write ${shownPath(path)}: it belongs to ${ownerOf(stats.uid)}, not to the user running ccs-bulk; ` +
        'ccs-bulk only appends to its own files: remove it, or name another file',
      'output_foreign',
    );
  }
  if (stats.nlink > 1) {
    throw new UsageError(
      `cannot write ${shownPath(path)}: it has ${stats.nlink} names (hard links), so writing it would change another file too; remove it, or name another file`,
      'output_foreign',
    );
  }
}

/**
 * A file the run reads back what it wrote (a state file, a results file to resume): it must be
 * the running user's own, or whoever could write the folder could feed the run (a state's bound
 * moved to 2099 would make every later export silently empty). Absent is fine.
 */
export function assertOwnExisting(path: string): void {
  refuseLink(path);
  const stats = lstatQuietly(path);
  if (stats !== undefined) assertOwnFile(path, stats);
}

/** lstat, or undefined for a path that is not there (or cannot be looked at: the open says why). */
function lstatQuietly(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/**
 * A symbolic link at an output path is refused, naming the path, its owner and where it points;
 * so is a link on the way to it (a folder of the path) that another account owns: the kernel
 * follows those whatever the open's flags. The user's own and root's links are taken as meant.
 */
export function refuseLink(path: string): void {
  refuseForeignFolderLink(path);
  const stats = lstatQuietly(path);
  if (stats === undefined || !stats.isSymbolicLink()) return;
  throw new UsageError(
    `${shownPath(path)} is a symbolic link (owned by ${ownerOf(stats.uid)}, pointing to ${linkTarget(path)}): ` +
      'ccs-bulk never writes through a link; remove it, or name the real file',
    'output_link',
  );
}

function refuseForeignFolderLink(path: string): void {
  if (ownUid === undefined) return;
  const absolute = resolve(path);
  for (let folder = dirname(absolute); folder !== dirname(folder); folder = dirname(folder)) {
    const stats = lstatQuietly(folder);
    if (stats === undefined || !stats.isSymbolicLink() || stats.uid === ownUid || stats.uid === 0) continue;
    throw new UsageError(
      `${shownPath(path)} is reached through ${shownPath(folder)}, a symbolic link owned by ${ownerOf(stats.uid)} (pointing to ` +
        `${linkTarget(folder)}): ccs-bulk never writes where another account's link leads; name the real folder`,
      'output_link',
    );
  }
}

/** Where a link points, as messages show it ('?' when it cannot be read). */
function linkTarget(link: string): string {
  try {
    return shownPath(readlinkSync(link));
  } catch {
    return '?';
  }
}

/** An open that failed: a link at the path is named as one; anything else by its errno. */
function cannotWrite(path: string, error: unknown): UsageError {
  if (error instanceof UsageError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  // ELOOP (O_NOFOLLOW), EEXIST (O_EXCL), or EACCES where the kernel protects links in sticky folders.
  refuseLink(path);
  return new UsageError(`cannot write ${shownPath(path)}: ${code ?? String(error)}`, 'output_unwritable');
}


/** Writes every byte (writeSync may write fewer); a failure stops the run cleanly. */
export function writeFully(fd: number, text: string | Uint8Array, path: string): void {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let offset = 0;
  try {
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
  } catch (error) {
    throw new OutputError(
      `cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? error}; rows in flight still finish — run again with --resume once it is fixed`,
    );
  }
}

/**
 * Collects text in a 64 KiB block and writes it when full (and on flush): one write(2) per
 * block, each string encoded straight into the block rather than concatenated first.
 */
export class BlockWriter {
  readonly #block = Buffer.allocUnsafe(65_536);
  #used = 0;

  constructor(
    readonly fd: number,
    readonly path: string,
  ) {}

  write(text: string): void {
    // At most 3 bytes of UTF-8 per UTF-16 unit: room is checked without measuring.
    if (this.#used + text.length * 3 > this.#block.length) {
      this.flush();
      if (text.length * 3 > this.#block.length) {
        writeFully(this.fd, text, this.path);
        return;
      }
    }
    this.#used += this.#block.write(text, this.#used);
  }

  /** `text` then `tail`, in one block: a line is not split across two writes. */
  writeLine(text: string, tail: ByteRange): void {
    const size = text.length * 3 + tail.end - tail.start;
    if (this.#used + size > this.#block.length) {
      this.flush();
      if (size > this.#block.length) {
        writeFully(this.fd, Buffer.concat([Buffer.from(text), tail.bytes.subarray(tail.start, tail.end)]), this.path);
        return;
      }
    }
    this.#used += this.#block.write(text, this.#used);
    this.#used += tail.bytes.copy(this.#block, this.#used, tail.start, tail.end);
  }

  flush(): void {
    if (this.#used === 0) return;
    writeFully(this.fd, this.#block.subarray(0, this.#used), this.path);
    this.#used = 0;
  }
}

/**
 * Refuses a results or failed file that is the input or each other: writing one would
 * destroy the input while it is read, or interleave two files into one.
 */
/** checkDistinctPaths' name for the input file. */
export const INPUT = 'the input';

export function checkDistinctPaths(files: { flag: string; path: string | undefined }[]): void {
  const seen: { flag: string; path: string; id: string }[] = [];
  for (const { flag, path } of files) {
    if (path === undefined) continue;
    // An output is never a link: refused here, before anything is read or sent.
    if (flag !== INPUT) refuseLink(path);
    let id = resolve(path);
    try {
      const stats = statSync(path);
      if (stats.isDirectory()) {
        // The input is read, not written: a directory there is the input's problem.
        if (flag === INPUT) throw new InputError(`the input ${path} is a directory; name a file`, 'input_not_file', { file: path });
        throw new UsageError(`${flag} ${path} is a directory; name a file`, 'output_unwritable');
      }
      id = `${stats.dev}:${stats.ino}`;
    } catch (error) {
      if (error instanceof UsageError || error instanceof InputError) throw error;
    }
    const clash = seen.find((other) => other.id === id || other.path === resolve(path));
    if (clash) {
      throw new UsageError(`${flag} ${path} is the same file as ${clash.flag} ${clash.path}: choose another path`, 'same_file');
    }
    seen.push({ flag, path: resolve(path), id });
  }
}

/** `2025-05-17T03:15:00.000Z` → `20250517-031500` (UTC): the date in the names of kept copies. */
export function fileStamp(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}
