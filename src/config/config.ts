/**
 * The config file (`ccs-bulk.config.json`, `--config FILE`, env CCS_CONFIG): connection settings,
 * import and export defaults, named reports. Merged once, under flags and env, over defaults:
 * flags > env > config file > defaults. Only paths and env names of secrets, never their values.
 */
import { resolve } from 'node:path';
import { loadConfig } from './config-load.js';
import { asFlag, type Config, CONFIG_FILE } from './config-schema.js';
import { UsageError } from '../errors.js';
import { EXPORT_DEFAULTS } from '../export/defaults.js';
import { IMPORT_DEFAULTS } from '../import/defaults.js';
import { expandOutName } from '../export/out-name.js';
import type { ExportFlags, ImportFlags } from './options.js';
import { PROGRESS_LINE_INTERVAL_S } from '../infra/progress-report.js';
import { redactValue } from '../infra/redact.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';

export { CONFIG_FILE, type Config } from './config-schema.js';
export { loadConfig, type LoadedConfig } from './config-load.js';

export type Source = 'flag' | 'env' | 'config' | 'default';

/** One setting: its flag's argv key, the config section and key, its env variable, its default. */
interface Setting {
  flag: string;
  section: 'connection' | 'import' | 'export' | 'report';
  key: string;
  env?: string;
  fallback?: unknown;
  /**
   * Where the connection goes through or whom it trusts, or a file written: taken only from a
   * config named with --config or CCS_CONFIG, never from one merely found in the current folder
   * (a folder checked out from elsewhere must not pick the proxy or a file to append to).
   */
  namedOnly?: true;
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
  { flag: 'proxy', section: 'connection', key: 'proxy', env: 'CCS_PROXY', namedOnly: true },
  { flag: 'caFile', section: 'connection', key: 'caFile', env: 'CCS_CA_FILE', namedOnly: true },
  { flag: 'clientCert', section: 'connection', key: 'clientCert', env: 'CCS_CLIENT_CERT_FILE', namedOnly: true },
  { flag: 'clientKey', section: 'connection', key: 'clientKey', env: 'CCS_CLIENT_KEY_FILE', namedOnly: true },
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
  { flag: 'acceptFailedRows', section: 'import', key: 'acceptFailedRows' },
  { flag: 'dateFormat', section: 'import', key: 'dateFormat', fallback: IMPORT_DEFAULTS.dateFormat },
  { flag: 'map', section: 'import', key: 'map' },
  { flag: 'mapping', section: 'import', key: 'mapping' },
  { flag: 'ignoreColumn', section: 'import', key: 'ignoreColumns' },
  { flag: 'identity', section: 'import', key: 'identity', fallback: 'email' },
  { flag: 'checkService', section: 'import', key: 'checkService' },
  { flag: 'heldCache', section: 'import', key: 'heldCache', namedOnly: true },
  { flag: 'liquidityType', section: 'import', key: 'liquidityType', fallback: IMPORT_DEFAULTS.liquidityType },
  { flag: 'applicationDateField', section: 'import', key: 'applicationDateField', fallback: IMPORT_DEFAULTS.applicationDateField },
  { flag: 'encoding', section: 'import', key: 'encoding' },
  { flag: 'delimiter', section: 'import', key: 'delimiter' },
  { flag: 'sheet', section: 'import', key: 'sheet' },
  { flag: 'headerRow', section: 'import', key: 'headerRow' },
  { flag: 'maxRecordSize', section: 'import', key: 'maxRecordSize', fallback: IMPORT_DEFAULTS.maxRecordSize },
  { flag: 'logFile', section: 'import', key: 'logFile', namedOnly: true },
  ...reporting('import'),
];

const EXPORT: Setting[] = [
  { flag: 'out', section: 'report', key: 'out', fallback: EXPORT_DEFAULTS.out, namedOnly: true },
  { flag: 'status', section: 'report', key: 'status' },
  { flag: 'creditStatus', section: 'report', key: 'creditStatus' },
  { flag: 'createdFrom', section: 'report', key: 'createdFrom' },
  { flag: 'createdTo', section: 'report', key: 'createdTo' },
  { flag: 'period', section: 'report', key: 'period' },
  { flag: 'country', section: 'report', key: 'country' },
  { flag: 'sinceLast', section: 'report', key: 'state', namedOnly: true },
  { flag: 'newSinceLast', section: 'report', key: 'newSinceLast', namedOnly: true },
  ...['format', 'columns', 'bom', 'gzip', 'overwrite', 'fileMode', 'timezone', 'datesInTimezone', 'delimiter', 'csvDates', 'sheetName', 'summarySheet', 'summaryFile', 'split', 'sort'].map((key): Setting => ({ flag: key, section: 'export', key })),
  { flag: 'logFile', section: 'export', key: 'logFile', namedOnly: true },
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
  const refused: string[] = [];
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
      if (setting.namedOnly && loaded?.implicit) refused.push(keyName(setting, reportName));
      from = 'config';
      flags[setting.flag] = asFlag(setting.flag, fromConfig);
    } else if (setting.fallback !== undefined) {
      from = 'default';
      flags[setting.flag] = setting.fallback;
    }
    if (from !== undefined) resolved[setting.flag] = { value: from === 'env' ? envValue : flags[setting.flag], from };
  }
  if (refused.length > 0) throw foundConfigRefused(file!, refused);
  if (raw.sandbox === true) resolved.sandbox = { value: true, from: 'flag' };
  resolveToken(raw, env, config, flags, resolved);
  // Every run says which file it read (the plan, the summary, the log).
  if (file !== undefined) flags.configFile = file;
  return { flags: flags as T, resolved, config: file, report: reportName };
}

/** A setting's key as the file spells it (`reports.weekly.out`, `connection.proxy`). */
function keyName(setting: Setting, report: string | undefined): string {
  return setting.section === 'report' ? `reports.${report ?? '?'}.${setting.key}` : `${setting.section}.${setting.key}`;
}

/** A found (not named) config that would choose the proxy, the trust or a file written. */
function foundConfigRefused(file: string, keys: readonly string[]): UsageError {
  return new UsageError(
    `${file} was found in the current directory, not named, and this run would take ${keys.join(', ')} from it: a config ` +
      'file that is only found never chooses the proxy, the trusted certificates or the files written. If you trust it, ' +
      `name it: --config ${file} (or CCS_CONFIG=${file}); else give the value${keys.length > 1 ? 's' : ''} as flags`,
    'config_untrusted',
  );
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

/** Settings that name files: shown absolute by `--print-config`, `out` with its placeholders filled. */
const PATH_FLAGS = new Set(['out', 'sinceLast', 'newSinceLast', 'logFile', 'heldCache', 'tokenFile', 'signingKey', 'caFile', 'clientCert', 'clientKey']);

/**
 * What `--print-config` checks before printing: every setting as the run would check it (the
 * file's values were checked as it was read), with no request and no file written.
 */
export async function checkLayered(command: Command, flags: unknown, env: NodeJS.ProcessEnv): Promise<void> {
  const { parseExportOptions, resolveImportOptions } = await import('./options.js');
  if (command === 'export') {
    const checked = parseExportOptions(flags as ExportFlags);
    if (checked.out !== '-') expandOutName(checked.out, new Date(), checked.report);
  }
  if (command === 'import') await resolveImportOptions(flags as ImportFlags, env, { dryRun: true, commandLine: [] });
}

/**
 * `--print-config`: the resolved settings as JSON, one line per setting, secrets redacted; a
 * path absolute (from the current directory, or the config file's folder for the file's
 * values), `out` as this run would name it, with its template beside it.
 */
export function formatResolved(layered: Layered<unknown>, now = new Date()): string {
  const settings = Object.entries(layered.resolved).map(([key, setting]) => {
    let shown: Record<string, unknown> = setting;
    // `-` is stdout, heldCache's `none` no file at all.
    const word = setting.value === '-' || (key === 'heldCache' && setting.value === 'none');
    if (PATH_FLAGS.has(key) && typeof setting.value === 'string' && !word) {
      const path = resolve(setting.value);
      shown = { ...setting, value: path };
      if (key === 'out' && /\{[a-z]*\}/i.test(path)) {
        shown = { ...setting, value: expandOutName(path, now, layered.report), template: path };
      }
    }
    // Every string redacted, not only the token's: a proxy URL carries its password, a path may be a pasted token.
    const redacted = Object.fromEntries(Object.entries(shown).map(([name, value]) => [name, typeof value === 'string' ? redactValue(value) : value]));
    return `    ${JSON.stringify(key)}: ${JSON.stringify(redacted)}`;
  });
  return [
    '{',
    `  "config": ${JSON.stringify(layered.config ?? null)},`,
    `  "report": ${JSON.stringify(layered.report ?? null)},`,
    `  "settings": {${settings.length > 0 ? `\n${settings.join(',\n')}\n  ` : ''}}`,
    '}',
    '',
  ].join('\n');
}
