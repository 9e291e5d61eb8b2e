/**
 * The trail beside an import's results file (`<results>.trail.csv`): one line per results line,
 * `row,line,outcome,at,body_sha256` — the row's line (CSV) or worksheet row as the file shows
 * it, when the row got its outcome (UTC, milliseconds) and, for a
 * row that was sent, the SHA-256 of the exact bytes of the body sent (the same bytes on every
 * attempt). The service returns neither the application date nor the liquidity type, so "sent
 * as given" is checked against this hash (`ccs-bulk verify`): the body is rebuilt from the
 * source row and hashed again.
 *
 * Why beside the results file, not in it: the results file's columns are what scripts and
 * spreadsheets read (its own eleven, then the input's), and a re-imported file would carry two
 * more columns. Append-only across runs (a resumed run adds to it; earlier runs' lines stay), 0600,
 * under the results file's lock; --overwrite moves it beside the results file's backup.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, linkSync, lstatSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { appendPrivate, replacePrivate, writeFully } from '../../infra/output-files.js';

export const TRAIL_HEADER = 'row,line,outcome,at,body_sha256';

export function trailPath(results: string): string {
  return `${results}.trail.csv`;
}

/** The SHA-256 of a body as sent, in hex. */
export function bodyHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export interface Trail {
  write(row: number, line: number | undefined, outcome: string, bodySha256: string | undefined): void;
  close(): void;
}

/** Opens the trail: appended to when the run resumes its results file, else started afresh. */
export function openTrail(results: string, resume: boolean): Trail {
  const path = trailPath(results);
  const fresh = !resume || !exists(path);
  const fd = fresh ? replacePrivate(path) : appendPrivate(path);
  if (fresh) writeFully(fd, `${TRAIL_HEADER}\n`, path);
  return {
    write(row, line, outcome, bodySha256) {
      writeFully(fd, `${row.toFixed(0)},${line === undefined ? '' : line.toFixed(0)},${outcome},${new Date().toISOString()},${bodySha256 ?? ''}\n`, path);
    },
    close() {
      closeSync(fd);
    },
  };
}

/** Moves the trail of a results file being replaced (--overwrite) beside its backup: never over a file. */
export function keepTrail(results: string, backup: string): void {
  const from = trailPath(results);
  if (!exists(from)) return;
  linkSync(from, trailPath(backup));
  rmSync(from, { force: true });
}

/**
 * The body hashes of a trail's `created` lines, by row: the first 64 bits of each (8 bytes a row,
 * a million rows in 8 MB), the last line of a row winning. Streamed; a torn last line is left out.
 */
export class CreatedHashes {
  #prints = new Uint32Array(2048);

  static async read(results: string): Promise<CreatedHashes | undefined> {
    const path = trailPath(results);
    if (!exists(path)) return undefined;
    const hashes = new CreatedHashes();
    const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      const [row, , outcome, , hash] = line.split(',');
      if (outcome !== 'created' || hash === undefined || !/^[0-9a-f]{64}$/.test(hash)) continue;
      hashes.#set(Number(row), hash);
    }
    return hashes;
  }

  /** Whether the trail holds a body hash for `row`, and whether it is `hash`'s. */
  check(row: number, hash: string): 'same' | 'differs' | 'none' {
    const at = row * 2;
    const hi = this.#prints[at] ?? 0;
    const lo = this.#prints[at + 1] ?? 0;
    if (hi === 0 && lo === 0) return 'none';
    return hi === parseInt(hash.slice(0, 8), 16) && lo === (parseInt(hash.slice(8, 16), 16) | 1) >>> 0 ? 'same' : 'differs';
  }

  #set(row: number, hash: string): void {
    if (!Number.isInteger(row) || row < 1) return;
    const at = row * 2;
    if (at + 1 >= this.#prints.length) {
      const grown = new Uint32Array(Math.max(at + 2, this.#prints.length * 2));
      grown.set(this.#prints);
      this.#prints = grown;
    }
    this.#prints[at] = parseInt(hash.slice(0, 8), 16);
    // The lowest bit set: 0:0 marks "no hash" (one bit of the 64 is given up for it).
    this.#prints[at + 1] = (parseInt(hash.slice(8, 16), 16) | 1) >>> 0;
  }
}

function exists(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
