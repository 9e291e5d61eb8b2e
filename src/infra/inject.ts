/**
 * Faults injected into a run by tests, to prove that the end-of-run account and main's guard
 * catch what could leave rows without an outcome. Internal: not exported by the library, and
 * empty (no effect) unless a test sets it in its own process.
 */
import type { RawRecord } from '../import/read/index.js';

export interface Injected {
  /** Wraps the reader's batches (a reader that ends early, a batch lost on the way). */
  batches?: ((batches: AsyncIterable<RawRecord[]>) => AsyncIterable<RawRecord[]>) | undefined;
  /** Wraps sending one row (a send that never settles). */
  send?: ((send: (raw: RawRecord) => Promise<void>, raw: RawRecord) => Promise<void>) | undefined;
  /** Sets the outage gate's probe timer (one that fires before its time). */
  probeTimer?: ((run: () => void, ms: number) => NodeJS.Timeout) | undefined;
  /** The export's clock (its start instant) when its caller gives none: a report's periods rehearsed on any date. */
  now?: (() => Date) | undefined;
  /** The clients an xlsx sheet holds below its header (Excel's 1,048,575): a test's overflow at a few hundred. */
  sheetRows?: number | undefined;
}

export const injected: Injected = {};
