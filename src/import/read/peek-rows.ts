/**
 * The first rows of a source, read before the run starts (the plan looks at their values), and
 * the source again with those rows first: the pipeline still meets every row once, in order.
 */
import type { RawRecord, RowSource } from './types.js';

export interface Peeked {
  /** The first `count` rows (fewer when the file has fewer, or reading failed early). */
  rows: RawRecord[];
  /** Replays the batches read ahead, then reads on. */
  source: RowSource;
}

/**
 * Reads whole batches until `count` rows are in hand. A reading error met on the way is held
 * and thrown by the replay where it was met, after the rows before it: a file that breaks at
 * line 50 still gets its first 49 rows' outcomes, as it would without the peek.
 */
export async function peekRows(source: RowSource, count: number): Promise<Peeked> {
  const iterator = source.batches[Symbol.asyncIterator]();
  const held: RawRecord[][] = [];
  let read = 0;
  let ended = false;
  let failure: { error: unknown } | undefined;
  try {
    while (read < count) {
      const next = await iterator.next();
      if (next.done === true) {
        ended = true;
        break;
      }
      held.push(next.value);
      read += next.value.length;
    }
  } catch (error) {
    failure = { error };
  }
  const rows = held.flat().slice(0, count);
  async function* replay(): AsyncGenerator<RawRecord[]> {
    // Shifted, not iterated: a batch already handed on is not kept alive by this list.
    for (let batch = held.shift(); batch !== undefined; batch = held.shift()) yield batch;
    if (failure !== undefined) throw failure.error;
    // Delegated, so a consumer that stops early (break) returns the reader's iterator too.
    if (!ended) yield* { [Symbol.asyncIterator]: () => iterator };
  }
  return {
    rows,
    source: {
      info: source.info,
      headers: source.headers,
      batches: replay(),
      bytesRead: () => source.bytesRead(),
      close: () => source.close(),
    },
  };
}
