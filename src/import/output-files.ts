/**
 * The import's output files: opened private (0600, also when they already existed), written
 * whole (a short write is finished, never left as a torn line), and never the input itself.
 */
import { fchmodSync, openSync, statSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError, OutputError, UsageError } from '../errors.js';
import { type FileLock, LockedError, lockFile } from '../lock.js';
import type { ByteRange } from './read/types.js';

/** One run per output file: a file held by a live run is refused (exit 2), naming that run. */
export function lockOutput(path: string, what: string): FileLock {
  try {
    return lockFile(path);
  } catch (error) {
    if (error instanceof LockedError) throw new UsageError(`${what} ${path}: ${error.message}`, 'output_locked');
    throw new UsageError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`, 'output_unwritable');
  }
}

export function openPrivate(path: string, flags: string): number {
  let fd: number;
  try {
    fd = openSync(path, flags, 0o600);
    fchmodSync(fd, 0o600);
  } catch (error) {
    throw new UsageError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`, 'output_unwritable');
  }
  return fd;
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
