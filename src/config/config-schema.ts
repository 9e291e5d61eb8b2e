/**
 * The config file's shape: its sections and keys, their types, and which keys are paths
 * (resolved from the file's own folder). Values are checked further by config-check.ts.
 */
import { z } from 'zod';
import { EXPORT_FORMATS } from '../export/defaults.js';
import { DATE_FORMATS } from '../import/defaults.js';

export const CONFIG_FILE = 'ccs-bulk.config.json';

const list = z.union([z.string(), z.array(z.string()).min(1)], { error: 'must be a comma list or an array of strings' });
const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the NAME of an environment variable, not its value')
  .refine((name) => !/^lk_/i.test(name), 'holds a token: give the NAME of the environment variable holding it');
const path = z.string().min(1);
// Numbers are only typed here: their ranges are the flags' own rules (config-check.ts).
const autoOrNumber = z.union([z.literal('auto'), z.number()], { error: 'must be "auto" or a number' });

export const connectionSchema = z
  .object({
    baseUrl: z.string().min(1),
    tokenFile: path,
    tokenEnv: envName,
    signingKeyFile: path,
    proxy: z.string().min(1),
    caFile: path,
    clientCert: path,
    clientKey: path,
    timeout: z.number(),
    retries: z.number(),
    outageTimeout: z.number().positive(),
    signatureHash: z.enum(['sha256', 'sha512']),
    signaturePadding: z.enum(['pkcs1', 'pss']),
  })
  .partial()
  .strict();

/** How an unattended run reports: progress lines, none, or a JSON summary. */
const runFields = {
  progressInterval: z.number(),
  quiet: z.boolean(),
  json: z.boolean(),
};

export const importSchema = z
  .object({
    ...runFields,
    concurrency: autoOrNumber,
    maxConcurrency: z.number(),
    rate: z.number(),
    maxErrors: z.number(),
    acceptFailedRows: z.boolean(),
    dateFormat: z.enum(DATE_FORMATS),
    map: z.record(z.string(), z.string()),
    // A mapping file --save-mapping wrote (mapping-file.ts), under `map`.
    mapping: path,
    ignoreColumns: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], { error: 'must be a header or an array of headers' }),
    identity: z.string().min(1),
    checkService: z.boolean(),
    // A file, or "none" (or false): kept in memory only.
    heldCache: z.union([path, z.literal(false)]),
    liquidityType: z.string().min(1),
    applicationDateField: z.string().min(1),
    encoding: z.string().min(1),
    delimiter: z.string().min(1),
    sheet: z.union([z.string().min(1), z.number().int().min(1)]),
    headerRow: z.number(),
    maxRecordSize: z.number(),
    logFile: path,
  })
  .partial()
  .strict();

const exportFields = {
  format: z.enum(EXPORT_FORMATS),
  columns: list,
  bom: z.boolean(),
  escapeFormulas: z.boolean(),
  direction: z.enum(['asc', 'desc']),
  pageSize: z.number(),
  prefetch: autoOrNumber,
  maxPrefetch: z.number(),
  gzip: z.boolean(),
  overwrite: z.boolean(),
  fileMode: z.union([z.string().regex(/^(0o?)?[0-7]{3}$/i), z.number().int()], { error: 'must be octal permission bits as a string, e.g. "640"' }),
  logFile: path,
  timezone: z.string().min(1),
  datesInTimezone: z.boolean(),
  delimiter: z.string().min(1),
  csvDates: z.enum(['iso', 'spreadsheet']),
  sheetName: z.string().min(1),
  summarySheet: z.enum(['first', 'last', 'none']),
  summaryFile: z.boolean(),
  split: z.string().min(1),
  sort: z.string().min(1),
};

export const exportSchema = z.object({ ...exportFields, ...runFields }).partial().strict();

export const reportShape = z.object({
    ...exportFields,
    status: list,
    creditStatus: list,
    createdFrom: z.string().min(1),
    createdTo: z.string().min(1),
    period: z.string().min(1),
    country: list,
    out: path,
    incremental: z.boolean(),
    state: path,
    newSinceLast: path,
  });

const reportSchema = reportShape
  .partial()
  .strict()
  .refine((report) => report.incremental !== true || report.state !== undefined, {
    message: 'incremental: true needs "state": the state file',
    path: ['state'],
  });

export const configSchema = z
  .object({
    $schema: z.string(),
    connection: connectionSchema,
    import: importSchema,
    export: exportSchema,
    reports: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a report name takes letters, digits, _ . -'), reportSchema),
  })
  .partial()
  .strict();

export type Config = z.infer<typeof configSchema>;

/** The keys that hold paths, per section: relative ones are read from the config file's folder. */
export const PATH_KEYS = {
  connection: ['tokenFile', 'signingKeyFile', 'caFile', 'clientCert', 'clientKey'],
  import: ['logFile', 'heldCache', 'mapping'],
  export: ['logFile'],
  report: ['out', 'state', 'logFile'],
} as const;

/** The keys a section (`connection`, `reports.NAME`, …) takes, for "did you mean". */
export function keysOf(path: readonly PropertyKey[]): string[] {
  const [section] = path;
  if (path.length === 0) return Object.keys(configSchema.shape);
  if (section === 'reports') return path.length >= 2 ? Object.keys(reportShape.shape) : [];
  const shapes: Record<string, z.ZodObject> = { connection: connectionSchema, import: importSchema, export: exportSchema };
  return Object.keys(shapes[String(section)]?.shape ?? {});
}

/** A config value in its flag's shape: lists as comma text, a map as field=Header entries. */
export function asFlag(flag: string, value: unknown): unknown {
  // Headers may hold commas: the list stays a list.
  if (flag === 'ignoreColumn') return Array.isArray(value) ? value : [value];
  // An export column's header may hold a comma (`name:Name, legal`): an array stays one.
  if (flag === 'columns' && Array.isArray(value)) return value;
  if (flag === 'heldCache' && value === false) return 'none';
  if (Array.isArray(value)) return value.join(',');
  if (flag === 'map' && value !== null && typeof value === 'object') {
    return Object.entries(value).map(([field, header]) => `${field}=${String(header)}`);
  }
  if ((flag === 'concurrency' || flag === 'prefetch' || flag === 'sheet') && typeof value === 'number') return String(value);
  return value;
}

/** One problem of the file: the key path (`reports.weekly.status`) and what is wrong. */
export interface ConfigProblem {
  at: string;
  message: string;
}
