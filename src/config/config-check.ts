/**
 * The config file's values, checked by the code that checks the flags (so a value the flag
 * refuses, the file refuses too), each problem named by its key (`reports.weekly.status`), not
 * by the flag (`--status`). Every key is checked on its own, so one run lists every problem;
 * then a report's keys together (format against out, an incremental report's bounds).
 */
import { asFlag, type ConfigProblem } from './config-schema.js';
import { isCcsError } from '../errors.js';
import { EXPORT_DEFAULTS } from '../export/defaults.js';
import { expandOutName } from '../export/out-name.js';
import { IMPORT_DEFAULTS } from '../import/defaults.js';
import { type ExportFlags, type ImportFlags, parseExportOptions, resolveImportOptions } from './options.js';
import { PROGRESS_LINE_INTERVAL_S } from '../infra/progress-report.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';
import { checkBaseUrl } from '../service/url.js';

type Section = Record<string, unknown>;

/** Flags whose config key is not the flag's own name in camelCase. */
const KEY_OF_FLAG: Record<string, string> = { sinceLast: 'state', signingKey: 'signingKeyFile', ignoreColumn: 'ignoreColumns' };

const camel = (kebab: string) => kebab.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** A flag's message in config terms: `--page-size must be…` → `pageSize must be…`. */
function asKeys(message: string): string {
  return message.replace(/--([a-z][a-z-]*)/g, (_, flag: string) => KEY_OF_FLAG[camel(flag)] ?? camel(flag));
}

/** Runs a flag check; its refusal becomes a problem at `at` (its leading key name dropped). */
async function problemOf(at: string, key: string | undefined, check: () => unknown): Promise<ConfigProblem | undefined> {
  try {
    await check();
    return undefined;
  } catch (error) {
    if (!isCcsError(error)) throw error;
    let message = asKeys(error.message);
    if (key !== undefined && message.startsWith(`${key}: `)) message = message.slice(key.length + 2);
    else if (key !== undefined && message.startsWith(`${key} `)) message = message.slice(key.length + 1);
    return { at: key === undefined ? at : `${at}.${key}`, message };
  }
}

/** The import and run flags with their defaults: one key at a time is put over them. */
const IMPORT_BASE: ImportFlags = {
  file: 'clients.csv',
  timeout: SERVICE_DEFAULTS.timeoutMs / 1000,
  retries: SERVICE_DEFAULTS.retries,
  progressInterval: PROGRESS_LINE_INTERVAL_S,
  signatureHash: SERVICE_DEFAULTS.scheme.hash,
  signaturePadding: SERVICE_DEFAULTS.scheme.padding,
  dateFormat: IMPORT_DEFAULTS.dateFormat,
  maxRecordSize: IMPORT_DEFAULTS.maxRecordSize,
  applicationDateField: IMPORT_DEFAULTS.applicationDateField,
  liquidityType: IMPORT_DEFAULTS.liquidityType,
  concurrency: String(IMPORT_DEFAULTS.concurrency),
  maxConcurrency: IMPORT_DEFAULTS.maxConcurrency,
};

const EXPORT_BASE: ExportFlags = {
  ...IMPORT_BASE,
  out: '-',
  escapeFormulas: EXPORT_DEFAULTS.escapeFormulas,
  direction: EXPORT_DEFAULTS.direction,
  pageSize: EXPORT_DEFAULTS.pageSize,
  prefetch: String(EXPORT_DEFAULTS.prefetch),
};

/** Keys checked by the import command's rules (the run keys of every section among them). */
const IMPORT_RULES = new Set(['timeout', 'retries', 'progressInterval', 'concurrency', 'maxConcurrency', 'rate', 'maxErrors', 'map', 'applicationDateField', 'delimiter', 'headerRow', 'maxRecordSize', 'identity']);
const EXPORT_RULES = new Set(['format', 'columns', 'bom', 'escapeFormulas', 'direction', 'pageSize', 'prefetch', 'maxPrefetch', 'status', 'creditStatus', 'createdFrom', 'createdTo', 'period', 'timezone', 'datesInTimezone', 'country', 'split', 'sort']);

async function checkKey(at: string, key: string, value: unknown, report: string | undefined): Promise<ConfigProblem | undefined> {
  if (key === 'baseUrl' && typeof value === 'string') return problemOf(at, key, () => checkBaseUrl(value));
  if (key === 'out' && typeof value === 'string' && value !== '-') {
    return problemOf(at, key, () => {
      expandOutName(value, new Date(), report ?? 'report');
      parseExportOptions({ ...EXPORT_BASE, out: value });
    });
  }
  if (IMPORT_RULES.has(key)) {
    return problemOf(at, key, () => resolveImportOptions({ ...IMPORT_BASE, [key]: asFlag(key, value) }, {}, { dryRun: true, commandLine: [] }));
  }
  if (EXPORT_RULES.has(key)) return problemOf(at, key, () => parseExportOptions({ ...EXPORT_BASE, [key]: asFlag(key, value) }));
  return undefined;
}

/** Every value of the file that has the right type, checked as its flag is. */
export async function checkConfigValues(raw: unknown, skip: readonly string[]): Promise<ConfigProblem[]> {
  if (raw === null || typeof raw !== 'object') return [];
  const file = raw as Record<string, unknown>;
  const skipped = (at: string) => skip.some((path) => path === at || at.startsWith(`${path}.`) || path === '(top level)');
  const problems: (ConfigProblem | undefined)[] = [];
  const checkSection = async (at: string, section: unknown, report?: string) => {
    if (section === null || typeof section !== 'object' || Array.isArray(section) || skipped(at)) return 0;
    const before = problems.filter(Boolean).length;
    for (const [key, value] of Object.entries(section as Section)) {
      if (!skipped(`${at}.${key}`)) problems.push(await checkKey(at, key, value, report));
    }
    return problems.filter(Boolean).length - before;
  };
  for (const name of ['connection', 'import', 'export']) await checkSection(name, file[name]);
  const reports = file.reports;
  if (reports !== null && typeof reports === 'object' && !skipped('reports')) {
    for (const [name, report] of Object.entries(reports as Record<string, Section>)) {
      const at = `reports.${name}`;
      // The keys together, once each is right: a report holds the export defaults it overrides.
      const touched = skip.some((path) => path === at || path.startsWith(`${at}.`));
      if ((await checkSection(at, report, name)) === 0 && !touched) {
        problems.push(await checkReport(at, usable('export', file.export, [...skip, ...problems.map((p) => p?.at ?? '')]), report));
      }
    }
  }
  return problems.filter((problem): problem is ConfigProblem => problem !== undefined);
}

/** A section's values that had no problem of their own (so the report's check does not repeat them). */
function usable(at: string, section: unknown, bad: readonly string[]): Section | undefined {
  if (section === null || typeof section !== 'object') return undefined;
  return Object.fromEntries(Object.entries(section as Section).filter(([key]) => !bad.includes(`${at}.${key}`)));
}

/** A report's keys over the export section's, as one run would take them. */
async function checkReport(at: string, defaults: Section | undefined, report: Section): Promise<ConfigProblem | undefined> {
  if (report.incremental === true && report.createdTo !== undefined) {
    return { at: `${at}.createdTo`, message: 'an incremental report sets its upper bound itself (the run\'s start): drop createdTo' };
  }
  const merged: Section = { ...defaults, ...report };
  const flags: Section = {};
  for (const key of EXPORT_RULES) if (merged[key] !== undefined) flags[key] = asFlag(key, merged[key]);
  return problemOf(at, undefined, () =>
    parseExportOptions({ ...EXPORT_BASE, ...flags, out: typeof report.out === 'string' ? report.out : EXPORT_BASE.out }),
  );
}
