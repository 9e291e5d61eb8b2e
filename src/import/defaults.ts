/** The import's defaults, shared by its flags (cli.ts) and the library (importClients). */
import { SERVICE_DEFAULTS } from '../service/defaults.js';
import { machineLimits, requestBound } from '../service/in-flight-bound.js';
import type { DateFormat } from './row/dates.js';
import { DEFAULT_MAX_RECORD_SIZE } from './read/types.js';

export { DATE_FORMATS } from './row/dates.js';

/** What `importClients` (and the import command) use for a setting left out. */
export const IMPORT_DEFAULTS = {
  /** Adapted while the run goes, from `startConcurrency` up to `maxConcurrency`. */
  concurrency: 'auto' as number | 'auto',
  /** Where `auto` starts, in requests in flight, when no earlier run's pace is remembered. */
  startConcurrency: SERVICE_DEFAULTS.connections,
  /** No pace of its own: what this machine can hold in flight (from its memory and open-file limit). */
  maxConcurrency: requestBound(machineLimits()),
  /** The day/month order from the file (a day over 12, else the headers' language); ISO dates are always read. */
  dateFormat: 'auto' as DateFormat,
  /** The only documented value (docs/service.md#create-client). */
  liquidityType: 'chain',
  applicationDateField: SERVICE_DEFAULTS.applicationDateField,
  maxRecordSize: DEFAULT_MAX_RECORD_SIZE,
} as const;

/**
 * `--results` when absent: beside the input. A rehearsal against the in-process sandbox gets a
 * name of its own, so its `created` rows never meet the real run's results file.
 */
export function defaultResultsPath(file: string, sandbox = false): string {
  return sandbox ? `${file}.sandbox.results.csv` : `${file}.results.csv`;
}
