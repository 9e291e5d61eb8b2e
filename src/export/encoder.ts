/** What every export format implements (encode.ts picks one): text out, one page at a time, no I/O. */
import type { FlatClient } from './columns.js';

export interface Encoder {
  /** The text before the first row: BOM and header (CSV), nothing (JSONL), the sheet's head (xlsx). */
  start(): string;
  encode(clients: readonly FlatClient[]): string;
  /** The text after the last row (the end of an xlsx sheet). */
  end(): string;
}
