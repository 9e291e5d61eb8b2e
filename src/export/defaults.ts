/** The export's defaults, shared by its flags (cli.ts) and the library (exportClients). */
import type { Direction } from '../service/schemas.js';
import { machineLimits, pageBound } from '../service/in-flight-bound.js';
import { EXPORT_COLUMNS } from './columns.js';

/**
 * `csv-semicolon`: CSV as Excel opens it in columns where the list separator is `;` (German,
 * French, Spanish, Italian, Portuguese, Dutch settings): `;` between cells and a UTF-8 BOM.
 */
export const EXPORT_FORMATS = ['csv', 'csv-semicolon', 'jsonl', 'xlsx'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The export's defaults, shared by the command's flags and exportClients. */
export const EXPORT_DEFAULTS = {
  /** The command's: stdout. */
  out: '-',
  /** Unless --out names a .xlsx or .jsonl file (formatOf). */
  format: 'csv' as ExportFormat,
  columns: EXPORT_COLUMNS,
  bom: false,
  escapeFormulas: true,
  direction: 'asc' as Direction,
  /** The largest page the sandbox serves; the service's limit is not published. */
  pageSize: 100,
  /** Adapted while the export runs (service/concurrency.ts), from `startPrefetch` up to `maxPrefetch`. */
  prefetch: 'auto' as number | 'auto',
  startPrefetch: 4,
  /** No pace of its own: the pages of `pageSize` clients this machine can hold (in-flight-bound.ts). */
  maxPrefetch: pageBound(machineLimits(), 100),
} as const;
