/** What every export format implements (encode.ts picks one): text out, one page at a time, no I/O. */
import type { FlatClient } from './columns.js';

export interface Encoder {
  /** The text before the first row: BOM and header (CSV), nothing (JSONL), the sheet's head (xlsx). */
  start(): string;
  encode(clients: readonly FlatClient[]): string;
  /** encode's text as UTF-8, where a format makes the bytes faster than a string (CSV). */
  encodeBytes?: ((clients: readonly FlatClient[]) => Uint8Array) | undefined;
  /** The text after the last row (the end of an xlsx sheet). */
  end(): string;
}
