/**
 * `--sort COLUMN[:desc]`: the service lists by created_at only, so the rows are sorted here,
 * with flat memory whatever the export's size: the external merge sort of the import's results
 * file (infra/external-sort.ts). Rows wait as JSON lines in chunks of CHUNK_BYTES; a chunk that
 * fills is sorted and written to a private temp run beside the report; at the end the runs are
 * merged and the rows handed on in order. Empty values sort last; equal values keep the
 * created_at order.
 */
import { createReadStream, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { mergeRuns, type RunHead, type SortLine, sortLines, writeRun } from '../infra/external-sort.js';
import type { FlatClient } from './columns.js';
import type { SortRule } from './report-options.js';

/** Bytes of rows held at once before a run is written. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** Rows handed on at a time, sorted. */
const BATCH = 500;

interface Key {
  value: string | number | null;
  seq: number;
}

export class RowSorter {
  readonly #rule: SortRule;
  readonly #near: string;
  readonly #chunkBytes: number;
  readonly #runs: string[] = [];
  #chunk: SortLine<Key>[] = [];
  #held = 0;
  #seq = 0;

  constructor(rule: SortRule, beside: string | undefined, chunkBytes = CHUNK_BYTES) {
    this.#rule = rule;
    this.#near = beside ?? join(tmpdir(), 'ccs-bulk-sort');
    this.#chunkBytes = chunkBytes;
  }

  /** Runs written so far (more than one chunk of rows). */
  get runs(): number {
    return this.#runs.length;
  }

  add(clients: readonly FlatClient[]): void {
    for (const client of clients) {
      const seq = this.#seq++;
      const bytes = Buffer.from(`${JSON.stringify([seq, client])}\n`, 'utf8');
      this.#chunk.push({ key: this.#keyOf(client, seq), bytes });
      this.#held += bytes.length;
      if (this.#held >= this.#chunkBytes) {
        this.#runs.push(writeRun(this.#near, this.#chunk, this.#compare));
        this.#chunk = [];
        this.#held = 0;
      }
    }
  }

  /** Every row, sorted, in batches. */
  async drain(emit: (clients: FlatClient[]) => Promise<void>): Promise<void> {
    let batch: FlatClient[] = [];
    const push = async (client: FlatClient) => {
      batch.push(client);
      if (batch.length >= BATCH) {
        await emit(batch);
        batch = [];
      }
    };
    if (this.#runs.length === 0) {
      for (const line of sortLines(this.#chunk, this.#compare)) await push(decode(line.bytes)[1]);
    } else {
      if (this.#chunk.length > 0) this.#runs.push(writeRun(this.#near, this.#chunk, this.#compare));
      const heads = await Promise.all(this.#runs.map((run) => this.#openRun(run)));
      await mergeRuns(heads, this.#compare, async (line) => push(decode(line.bytes)[1]));
    }
    this.#chunk = [];
    if (batch.length > 0) await emit(batch);
    this.cleanup();
  }

  /** Removes the temp runs; never throws. */
  cleanup(): void {
    for (const run of this.#runs.splice(0)) rmSync(run, { force: true });
  }

  #keyOf(client: FlatClient, seq: number): Key {
    const value = client[this.#rule.column];
    return { value: value === '' || value === undefined || typeof value === 'object' ? null : value, seq };
  }

  readonly #compare = (a: Key, b: Key): number => {
    if (a.value !== b.value) {
      if (a.value === null) return 1;
      if (b.value === null) return -1;
      const order = a.value < b.value ? -1 : 1;
      return this.#rule.desc ? -order : order;
    }
    return a.seq - b.seq;
  };

  async #openRun(run: string): Promise<RunHead<Key>> {
    const lines = createInterface({ input: createReadStream(run), crlfDelay: Infinity })[Symbol.asyncIterator]();
    const head: RunHead<Key> = {
      line: undefined,
      next: async () => {
        const step = await lines.next();
        if (step.done) {
          head.line = undefined;
          return;
        }
        const bytes = Buffer.from(`${step.value}\n`, 'utf8');
        const [seq, client] = decode(bytes);
        head.line = { key: this.#keyOf(client, seq), bytes };
      },
    };
    await head.next();
    return head;
  }
}

function decode(bytes: Buffer): [number, FlatClient] {
  return JSON.parse(bytes.toString('utf8')) as [number, FlatClient];
}
