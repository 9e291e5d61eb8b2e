/**
 * The config file (`ccs-bulk.config.json`, `--config FILE`, env CCS_CONFIG): connection settings,
 * import and export defaults, named reports. Merged once, under flags and env, over defaults:
 * flags > env > config file > defaults. Only paths and env names of secrets, never their values.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { UsageError } from './errors.js';
import { EXPORT_DEFAULTS, EXPORT_FORMATS } from './export/defaults.js';
import { DATE_FORMATS, IMPORT_DEFAULTS } from './import/defaults.js';
import { PROGRESS_LINE_INTERVAL_S } from './progress-report.js';
import { SERVICE_DEFAULTS } from './service/defaults.js';

export const CONFIG_FILE = 'ccs-bulk.config.json';

const list = z.union([z.string(), z.array(z.string()).min(1)], { error: 'must be a comma list or an array of strings' });
const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the NAME of an environment variable, not its value')
  .refine((name) => !/^lk_/i.test(name), 'holds a token: give the NAME of the environment variable holding it');
const path = z.string().min(1);

const connectionSchema = z
  .object({
    baseUrl: z.string().min(1),
    tokenFile: path,
    tokenEnv: envName,
    signingKeyFile: path,
    proxy: z.string().min(1),
    caFile: path,
    clientCert: path,
    clientKey: path,
    timeout: z.number().positive(),
    retries: z.number().int().min(0),
    outageTimeout: z.number().positive(),
    signatureHash: z.enum(['sha256', 'sha512']),
    signaturePadding: z.enum(['pkcs1', 'pss']),
  })
  .partial()
  .strict();

/** How an unattended run reports: progress lines, none, or a JSON summary. */
const runFields = {
  progressInterval: z.number().positive(),
  quiet: z.boolean(),
  json: z.boolean(),
};

const importSchema = z
  .object({
    ...runFields,
    concurrency: z.union([z.literal('auto'), z.number().int().min(1)]),
    maxConcurrency: z.number().int().min(1),
    rate: z.number().positive(),
    maxErrors: z.number().int().min(1),
    dateFormat: z.enum(DATE_FORMATS),
    map: z.record(z.string(), z.string()),
    liquidityType: z.string().min(1),
    applicationDateField: z.string().min(1),
    encoding: z.string().min(1),
    delimiter: z.string().min(1),
    sheet: z.union([z.string().min(1), z.number().int().min(1)]),
    headerRow: z.number().int().min(1),
    maxRecordSize: z.number().int().min(1),
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
  pageSize: z.number().int().min(1),
  prefetch: z.union([z.literal('auto'), z.number().int().min(1)]),
  maxPrefetch: z.number().int().min(1),
  gzip: z.boolean(),
  overwrite: z.boolean(),
  fileMode: z.union([z.string().regex(/^(0o?)?[0-7]{3}$/i), z.number().int()], { error: 'must be octal permission bits as a string, e.g. "640"' }),
  logFile: path,
};

const exportSchema = z.object({ ...exportFields, ...runFields }).partial().strict();

const reportSchema = z
  .object({
    ...exportFields,
    status: list,
    creditStatus: list,
    createdFrom: z.string().min(1),
    createdTo: z.string().min(1),
    out: path,
    incremental: z.boolean(),
    state: path,
    newSinceLast: path,
  })
  .partial()
  .strict()
  .refine((report) => report.incremental !== true || report.state !== undefined, {
    message: 'incremental: true needs "state": the state file',
    path: ['state'],
  });

const configSchema = z
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

export interface LoadedConfig {
  file: string;
  config: Config;
}

const invalid = (file: string, message: string) => new UsageError(`config ${file}: ${message}`, 'config_invalid');

/** Keys that would hold a secret's value: refused by name, with the way to give it instead. */
const SECRET_KEYS: Record<string, string> = {
  token: 'use "tokenFile" (a path) or "tokenEnv" (the name of an environment variable)',
  apiToken: 'use "tokenFile" (a path) or "tokenEnv" (the name of an environment variable)',
  signingKey: 'use "signingKeyFile" (the path of the PEM file)',
  privateKey: 'use "signingKeyFile" (the path of the PEM file)',
  key: 'use "signingKeyFile" (the path of the PEM file)',
  password: 'secrets stay out of the config file',
};

function refuseSecrets(value: unknown, at: string[], file: string): void {
  if (typeof value === 'string') {
    if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(value)) {
      throw invalid(file, `${at.join('.')} holds a private key: a key value is refused; give its file path in connection.signingKeyFile`);
    }
    if (at.at(-1) === 'proxy' && /^[a-z]+:\/\/[^/@]*:[^/@]*@/i.test(value)) {
      throw invalid(file, `${at.join('.')} holds proxy credentials: give them with --proxy or CCS_PROXY, not in the file`);
    }
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    const how = SECRET_KEYS[key];
    if (how !== undefined && at.length <= 1) {
      throw invalid(file, `${[...at, key].join('.')}: a token or key value is refused in the config file; ${how}`);
    }
    refuseSecrets(inner, [...at, key], file);
  }
}

/** `--config FILE`, else CCS_CONFIG, else ./ccs-bulk.config.json when it exists. */
export async function loadConfig(flag: string | undefined, env: NodeJS.ProcessEnv): Promise<LoadedConfig | undefined> {
  const named = flag ?? (env.CCS_CONFIG?.trim() || undefined);
  const file = named ?? CONFIG_FILE;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (named === undefined && code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read config ${file}: ${code ?? 'error'}`, 'config_invalid');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw invalid(file, `not valid JSON: ${(error as Error).message}`);
  }
  refuseSecrets(raw, [], file);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    throw invalid(file, `${where}: ${issue.message}`);
  }
  return { file, config: parsed.data };
}

export type Source = 'flag' | 'env' | 'config' | 'default';

/** One setting: its flag's argv key, the config section and key, its env variable, its default. */
interface Setting {
  flag: string;
  section: 'connection' | 'import' | 'export' | 'report';
  key: string;
  env?: string;
  fallback?: unknown;
}

/** --progress-interval, --quiet, --json: from the command's own section. */
const reporting = (section: 'import' | 'export'): Setting[] => [
  { flag: 'progressInterval', section, key: 'progressInterval', fallback: PROGRESS_LINE_INTERVAL_S },
  { flag: 'quiet', section, key: 'quiet' },
  { flag: 'json', section, key: 'json' },
];

const CONNECTION: Setting[] = [
  { flag: 'baseUrl', section: 'connection', key: 'baseUrl', env: 'CCS_BASE_URL' },
  { flag: 'tokenFile', section: 'connection', key: 'tokenFile' },
  { flag: 'proxy', section: 'connection', key: 'proxy', env: 'CCS_PROXY' },
  { flag: 'caFile', section: 'connection', key: 'caFile', env: 'CCS_CA_FILE' },
  { flag: 'clientCert', section: 'connection', key: 'clientCert', env: 'CCS_CLIENT_CERT_FILE' },
  { flag: 'clientKey', section: 'connection', key: 'clientKey', env: 'CCS_CLIENT_KEY_FILE' },
  { flag: 'timeout', section: 'connection', key: 'timeout', fallback: SERVICE_DEFAULTS.timeoutMs / 1000 },
  { flag: 'retries', section: 'connection', key: 'retries', fallback: SERVICE_DEFAULTS.retries },
  { flag: 'outageTimeout', section: 'connection', key: 'outageTimeout', fallback: SERVICE_DEFAULTS.outageTimeoutS },
];

const SIGNING: Setting[] = [
  { flag: 'signingKey', section: 'connection', key: 'signingKeyFile', env: 'CCS_SIGNING_KEY_FILE' },
  { flag: 'signatureHash', section: 'connection', key: 'signatureHash', fallback: SERVICE_DEFAULTS.scheme.hash },
  { flag: 'signaturePadding', section: 'connection', key: 'signaturePadding', fallback: SERVICE_DEFAULTS.scheme.padding },
];

const IMPORT: Setting[] = [
  ...SIGNING,
  { flag: 'concurrency', section: 'import', key: 'concurrency', fallback: String(IMPORT_DEFAULTS.concurrency) },
  { flag: 'maxConcurrency', section: 'import', key: 'maxConcurrency', fallback: IMPORT_DEFAULTS.maxConcurrency },
  { flag: 'rate', section: 'import', key: 'rate' },
  { flag: 'maxErrors', section: 'import', key: 'maxErrors' },
  { flag: 'dateFormat', section: 'import', key: 'dateFormat', fallback: IMPORT_DEFAULTS.dateFormat },
  { flag: 'map', section: 'import', key: 'map' },
  { flag: 'liquidityType', section: 'import', key: 'liquidityType', fallback: IMPORT_DEFAULTS.liquidityType },
  { flag: 'applicationDateField', section: 'import', key: 'applicationDateField', fallback: IMPORT_DEFAULTS.applicationDateField },
  { flag: 'encoding', section: 'import', key: 'encoding' },
  { flag: 'delimiter', section: 'import', key: 'delimiter' },
  { flag: 'sheet', section: 'import', key: 'sheet' },
  { flag: 'headerRow', section: 'import', key: 'headerRow' },
  { flag: 'maxRecordSize', section: 'import', key: 'maxRecordSize', fallback: IMPORT_DEFAULTS.maxRecordSize },
  { flag: 'logFile', section: 'import', key: 'logFile' },
  ...reporting('import'),
];

const EXPORT: Setting[] = [
  { flag: 'out', section: 'report', key: 'out', fallback: EXPORT_DEFAULTS.out },
  { flag: 'status', section: 'report', key: 'status' },
  { flag: 'creditStatus', section: 'report', key: 'creditStatus' },
  { flag: 'createdFrom', section: 'report', key: 'createdFrom' },
  { flag: 'createdTo', section: 'report', key: 'createdTo' },
  { flag: 'sinceLast', section: 'report', key: 'state' },
  { flag: 'newSinceLast', section: 'report', key: 'newSinceLast' },
  ...['format', 'columns', 'bom', 'gzip', 'overwrite', 'fileMode', 'logFile'].map((key): Setting => ({ flag: key, section: 'export', key })),
  { flag: 'escapeFormulas', section: 'export', key: 'escapeFormulas', fallback: EXPORT_DEFAULTS.escapeFormulas },
  { flag: 'direction', section: 'export', key: 'direction', fallback: EXPORT_DEFAULTS.direction },
  { flag: 'pageSize', section: 'export', key: 'pageSize', fallback: EXPORT_DEFAULTS.pageSize },
  { flag: 'prefetch', section: 'export', key: 'prefetch', fallback: String(EXPORT_DEFAULTS.prefetch) },
  { flag: 'maxPrefetch', section: 'export', key: 'maxPrefetch', fallback: EXPORT_DEFAULTS.maxPrefetch },
  ...reporting('export'),
];

export type Command = 'import' | 'export' | 'check';

const SETTINGS: Record<Command, Setting[]> = {
  import: [...CONNECTION, ...IMPORT],
  check: [...CONNECTION, ...SIGNING],
  export: [...CONNECTION, ...EXPORT],
};

/** A config value in its flag's shape: lists as comma text, a map as field=Header entries. */
function asFlag(flag: string, value: unknown): unknown {
  if (Array.isArray(value)) return value.join(',');
  if (flag === 'map' && value !== null && typeof value === 'object') {
    return Object.entries(value).map(([field, header]) => `${field}=${String(header)}`);
  }
  if ((flag === 'concurrency' || flag === 'prefetch' || flag === 'sheet') && typeof value === 'number') return String(value);
  return value;
}

export interface Layered<T> {
  /** The flags with env-less settings filled from the config file, then the defaults. */
  flags: T;
  /** Where each setting's value came from, and the value (secrets redacted). */
  resolved: Record<string, { value: unknown; from: Source }>;
  config: string | undefined;
  report: string | undefined;
}

export interface RawFlags {
  config?: string | undefined;
  report?: string | undefined;
  sandbox?: boolean | undefined;
  tokenFile?: string | undefined;
}

/**
 * flags > env > config file > defaults, for one command. A setting with an environment variable
 * set stays undefined in `flags` (the resolvers read the env after the flag), so the config
 * fills only what neither gave.
 */
export async function layerConfig<T>(args: RawFlags, env: NodeJS.ProcessEnv, command: Command): Promise<Layered<T>> {
  const raw = args as RawFlags & Record<string, unknown>;
  const loaded = await loadConfig(raw.config, env);
  const config = loaded?.config ?? {};
  const file = loaded?.file;
  const reportName = command === 'export' ? raw.report : undefined;
  let report: NonNullable<Config['reports']>[string] | undefined;
  if (reportName !== undefined) {
    report = config.reports?.[reportName];
    if (report === undefined) {
      const known = Object.keys(config.reports ?? {});
      throw new UsageError(
        file === undefined
          ? `--report ${reportName}: no config file (${CONFIG_FILE} here, --config FILE or CCS_CONFIG)`
          : `--report ${reportName}: no such report in ${file}${known.length > 0 ? `; reports are ${known.join(', ')}` : ''}`,
        'report_unknown',
      );
    }
  }
  const flags: Record<string, unknown> = { ...raw };
  const resolved: Layered<T>['resolved'] = {};
  for (const setting of SETTINGS[command]) {
    const fromConfig =
      setting.flag === 'sinceLast'
        ? report?.incremental === true ? report.state : undefined
        : setting.section === 'report'
        ? (report as Record<string, unknown> | undefined)?.[setting.key]
        : ((report as Record<string, unknown> | undefined)?.[setting.key] ??
          (config[setting.section] as Record<string, unknown> | undefined)?.[setting.key]);
    const envValue = setting.env === undefined ? undefined : env[setting.env]?.trim() || undefined;
    // --sandbox is a connection of its own: the file's service settings do not apply.
    const skipConfig = raw.sandbox === true && setting.section === 'connection';
    let from: Source | undefined;
    if (raw[setting.flag] !== undefined) from = 'flag';
    else if (envValue !== undefined) from = 'env';
    else if (fromConfig !== undefined && !skipConfig) {
      from = 'config';
      flags[setting.flag] = asFlag(setting.flag, fromConfig);
    } else if (setting.fallback !== undefined) {
      from = 'default';
      flags[setting.flag] = setting.fallback;
    }
    if (from !== undefined) resolved[setting.flag] = { value: from === 'env' ? envValue : flags[setting.flag], from };
  }
  if (raw.sandbox === true) resolved.sandbox = { value: true, from: 'flag' };
  resolveToken(raw, env, config, flags, resolved);
  return { flags: flags as T, resolved, config: file, report: reportName };
}

/** --token-file > CCS_TOKEN > the file's tokenFile > the variable its tokenEnv names. */
function resolveToken(
  raw: RawFlags,
  env: NodeJS.ProcessEnv,
  config: Config,
  flags: Record<string, unknown>,
  resolved: Layered<unknown>['resolved'],
): void {
  if (raw.sandbox === true) return;
  if (raw.tokenFile !== undefined || env.CCS_TOKEN?.trim()) {
    if (raw.tokenFile === undefined) {
      delete flags.tokenFile;
      delete resolved.tokenFile;
    }
    resolved.token = { value: '[redacted]', from: raw.tokenFile !== undefined ? 'flag' : 'env' };
    return;
  }
  const tokenEnv = config.connection?.tokenEnv;
  if (config.connection?.tokenFile !== undefined) {
    resolved.token = { value: '[redacted]', from: 'config' };
  } else if (tokenEnv !== undefined) {
    // Read where the token is needed (options.ts): validate needs none.
    flags.tokenEnv = tokenEnv;
    resolved.tokenEnv = { value: tokenEnv, from: 'config' };
    resolved.token = { value: env[tokenEnv]?.trim() ? '[redacted]' : null, from: 'config' };
  }
}

/** `--print-config`: the resolved settings as JSON, one line per setting, secrets redacted. */
export function formatResolved(layered: Layered<unknown>): string {
  const settings = Object.entries(layered.resolved).map(([key, value]) => `    ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  return [
    '{',
    `  "config": ${JSON.stringify(layered.config ?? null)},`,
    `  "report": ${JSON.stringify(layered.report ?? null)},`,
    `  "settings": {${settings.length > 0 ? `\n${settings.join(',\n')}\n  ` : ''}}`,
    '}',
    '',
  ].join('\n');
}
