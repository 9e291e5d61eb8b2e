/**
 * Config files as people write them: relative paths read from the file's folder, every problem
 * of the file in one error (one line per problem, named by key, checked by the flag's rules,
 * with "did you mean"), JSON syntax errors at their line and column with a caret and a hint,
 * and `--print-config` showing absolute, filled-in paths and refusing what a run would refuse.
 * In-process (cli.ts's runCli with injected io) except where the current directory or the
 * printed line is the point.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli as runInProcess } from '../src/cli/cli.js';
import { UsageError } from '../src/errors.js';
import { exportClients } from '../src/export/run-export.js';
import { createServiceClient } from '../src/service/client.js';
import { ROOT, runCli, useSandbox } from './helpers.js';
import { shellQuote } from '../src/cli/resume-command.js';

const context = useSandbox({ seed: 20 });

/** Runs the CLI in this process; resolves to its exit code and what it printed, or rejects with its error. */
async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks = { stdout: '', stderr: '' };
  stdout.setEncoding('utf8').on('data', (chunk: string) => (chunks.stdout += chunk));
  stderr.setEncoding('utf8').on('data', (chunk: string) => (chunks.stderr += chunk));
  const code = await runInProcess(argv, env, { stdout, stderr });
  return { code, ...chunks };
}

/** A folder under the test's temp dir holding `cfg/ccs-bulk.config.json` with `content`. */
async function configIn(name: string, content: unknown): Promise<{ dir: string; file: string }> {
  const dir = join(context.dir, name);
  await mkdir(join(dir, 'cfg'), { recursive: true });
  const file = join(dir, 'cfg', 'ccs-bulk.config.json');
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return { dir, file };
}

/** The error a run rejects with (a CLI run in this process throws what main.ts would print). */
async function refusal(run: Promise<unknown>): Promise<UsageError> {
  const error = await run.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(UsageError);
  return error as UsageError;
}

const WEEKLY = {
  status: 'approved', columns: ['id', 'name', 'status'], out: 'reports/{report}-{date}.csv',
  incremental: true, state: 'state/{report}.json'.replace('{report}', 'weekly'),
};

describe('relative paths are read from the config file\'s folder', () => {
  it('--print-config shows them absolute, out filled in for tonight beside its template', async () => {
    const { dir, file } = await configIn('paths', {
      connection: { tokenFile: 'secrets/token', caFile: '/etc/ssl/ca.pem' },
      export: { logFile: 'logs/ccs-bulk.log' },
      reports: { weekly: WEEKLY },
    });
    const printed = await cli(['export', '--config', file, '--report', 'weekly', '--print-config']);
    expect(printed.code).toBe(0);
    const { settings } = JSON.parse(printed.stdout) as { settings: Record<string, { value: unknown; from: string; template?: string }> };
    const cfg = join(dir, 'cfg');
    const today = new Date().toISOString().slice(0, 10);
    expect(settings.out).toEqual({ value: join(cfg, `reports/weekly-${today}.csv`), from: 'config', template: join(cfg, 'reports/{report}-{date}.csv') });
    expect(settings.sinceLast).toEqual({ value: join(cfg, 'state/weekly.json'), from: 'config' });
    expect(settings.logFile).toEqual({ value: join(cfg, 'logs/ccs-bulk.log'), from: 'config' });
    expect(settings.tokenFile).toEqual({ value: join(cfg, 'secrets/token'), from: 'config' });
    expect(settings.caFile).toEqual({ value: '/etc/ssl/ca.pem', from: 'config' });
    // A flag's path is the current directory's, shown absolute too.
    const flagged = await cli(['export', '--config', file, '--report', 'weekly', '--out', 'here.csv', '--print-config']);
    expect(JSON.parse(flagged.stdout).settings.out).toEqual({ value: join(process.cwd(), 'here.csv'), from: 'flag' });
  });

  it('a run from another directory writes the report, state and log beside the config (first night: folders made)', async () => {
    const { dir } = await configIn('elsewhere', { export: { logFile: 'ccs-bulk.log' }, reports: { weekly: WEEKLY } });
    const other = join(context.dir, 'elsewhere-cwd');
    await mkdir(other);
    const env = { CCS_BASE_URL: context.sandbox.url, CCS_TOKEN: context.sandbox.token };
    const run = await runCli(['export', '--config', join('..', 'elsewhere', 'cfg', 'ccs-bulk.config.json'), '--report', 'weekly', '--quiet'], { cwd: other, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const cfg = join(dir, 'cfg');
    expect((await readdir(join(cfg, 'reports')))[0]).toMatch(/^weekly-\d{4}-\d\d-\d\d\.csv$/);
    expect(existsSync(join(cfg, 'state', 'weekly.json'))).toBe(true);
    expect(await readFile(join(cfg, 'ccs-bulk.log'), 'utf8')).toContain('"run_finished"');
    expect(await readdir(other)).toEqual([]);
  });
});

describe('every problem of the file at once, named by its key', () => {
  it('one line per problem, `config_invalid: FILE: key: …`, by the rules of the flags', async () => {
    const { file } = await configIn('problems', {
      connection: { timeout: 60, retries: 50, baseUrl: 'http://ccs.example.com' },
      export: { pagesize: 100, direction: 'up' },
      reports: {
        weekly: { ...WEEKLY, status: 'aproved', creditStatus: 'enabled', createdFrom: '01/02/2025', format: 'xls', out: 'r-{week}.csv' },
        daily: { columns: 'id,nmae', prefetch: 0 },
        monthly: { incremental: true, state: 's.json', createdTo: '2025-01-31', out: 'm.csv' },
      },
    });
    const error = await refusal(cli(['export', '--config', file, '--report', 'daily', '--print-config']));
    expect(error.code).toBe('config_invalid');
    const lines = error.message.split('\n');
    expect(lines[0]).toBe(`${file}: 12 problems, nothing was run:`);
    const problems = lines.slice(1).map((line) => {
      expect(line.startsWith(`config_invalid: ${file}: `)).toBe(true);
      return line.slice(`config_invalid: ${file}: `.length);
    });
    // In the file's order; a flag's name never appears, the key's does.
    expect(problems.map((line) => line.split(':')[0])).toEqual([
      'connection.retries', 'connection.baseUrl', 'export.pagesize', 'export.direction',
      'reports.weekly.status', 'reports.weekly.out', 'reports.weekly.creditStatus', 'reports.weekly.createdFrom', 'reports.weekly.format',
      'reports.daily.columns', 'reports.daily.prefetch', 'reports.monthly.createdTo',
    ]);
    expect(error.message).not.toMatch(/--[a-z]/);
    expect(problems).toContain('reports.weekly.status: unknown value "aproved" (did you mean approved?); valid values are pending_review, pending_documents, document_review, rejected, approved');
    expect(problems).toContain('export.pagesize: unknown key (did you mean pageSize?); keys here are format, columns, bom, escapeFormulas, direction, pageSize, prefetch, maxPrefetch, gzip, overwrite, fileMode, logFile, timezone, datesInTimezone, delimiter, csvDates, sheetName, summarySheet, summaryFile, split, sort, progressInterval, quiet, json');
    expect(problems).toContain('reports.weekly.format: unknown value "xls" (did you mean xlsx?); valid values are csv, csv-semicolon, jsonl, xlsx');
    expect(problems).toContain('connection.retries: must be at most 20');
    expect(problems.find((line) => line.startsWith('reports.weekly.createdFrom: '))).toContain('01/02/2025');
    expect(problems.find((line) => line.startsWith('reports.weekly.out: '))).toContain('{week}');
    expect(problems.find((line) => line.startsWith('reports.daily.columns: '))).toContain('"nmae"');
    expect(problems.find((line) => line.startsWith('connection.baseUrl: '))).toMatch(/refusing plain http/);
  });

  it('a run is refused the same way before any request; a flag\'s own mistake is still named as the flag', async () => {
    const { file } = await configIn('refused-run', { reports: { weekly: { ...WEEKLY, status: 'aproved' } } });
    const requests = context.sandbox.stats.requests;
    const env = { CCS_BASE_URL: context.sandbox.url, CCS_TOKEN: context.sandbox.token };
    const error = await refusal(cli(['export', '--config', file, '--report', 'weekly'], env));
    expect(error.message).toBe(`config_invalid: ${file}: reports.weekly.status: unknown value "aproved" (did you mean approved?); valid values are pending_review, pending_documents, document_review, rejected, approved`);
    expect(context.sandbox.stats.requests).toBe(requests);
    const { file: good } = await configIn('flag-mistake', { reports: { weekly: WEEKLY } });
    const flag = await refusal(cli(['export', '--config', good, '--report', 'weekly', '--page-size', '0', '--print-config']));
    expect(flag.code).toBe('bad_option');
    expect(flag.message).toMatch(/^--page-size must be a whole number from 1 to 1000 \(got 0\)/);
  });

  it('cross-key checks of a report: format against its out, with the export section under it', async () => {
    const { file } = await configIn('cross', { export: { format: 'xlsx' }, reports: { r: { out: 'r.csv' } } });
    const error = await refusal(cli(['export', '--config', file, '--print-config']));
    expect(error.message).toBe(`config_invalid: ${file}: reports.r: format xlsx does not match r.csv: name the file .xlsx or drop format`);
  });
});

describe('JSON syntax errors: line, column, the line with a caret, a hint', () => {
  const KEY_BODY = 'MIIJQgIBADANBgkqhkiG9w0BAQEFAASCCSwwggkoAgEAAoICAQC7';
  const cases: [string, string, string[]][] = [
    ['a trailing comma', '{\n  "export": {\n    "pageSize": 50,\n  }\n}\n', ['line 4, column 3', '  4 |   }', '      ^', 'no comma after the last item']],
    ['a comment', '{\n  // the nightly report\n  "export": {}\n}\n', ['line 2, column 3', '  2 |   // the nightly report', 'no comments']],
    ['single quotes', "{ 'export': {} }", ['line 1, column 3', "  1 | { 'export': {} }", '        ^', 'double quotes']],
    ['a bare key', '{ export: {} }', ['line 1, column 3', 'keys take double quotes']],
    ['cut short', '{ "export": ', ['line 1, column 13', 'Unexpected end of JSON input']],
    ['on a line holding a key', `{\n  "connection": { "signingKey": "-----BEGIN PRIVATE KEY-----\\n${KEY_BODY}", }\n}`, ['line 2, column', '  2 | (not shown: it may hold a secret)', 'no comma after the last item']],
  ];
  it.each(cases)('%s', async (_name, text, parts) => {
    const { file } = await configIn(`json-${_name.replace(/\W/g, '-')}`, text);
    const error = await refusal(cli(['export', '--config', file, '--print-config']));
    expect(error.message.startsWith(`config_invalid: ${file}: not valid JSON at `)).toBe(true);
    for (const part of parts) expect(error.message).toContain(part);
    expect(error.message).not.toContain(KEY_BODY);
  });
});

describe("the doc's examples of a refused file print as the doc shows", () => {
  const doc = readFileSync(join(ROOT, 'docs', 'scheduled-reports.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## A report in the config file'));
  const config = /```json\n([\s\S]*?)```/.exec(section)![1]!;
  const [problems, syntax] = [...section.matchAll(/```text\n([\s\S]*?)```/g)].map((match) => match[1]!);

  it.each([
    ['two mistakes', config.replace('"status": "approved"', '"status": "aproved"').replace('"newSinceLast"', '"pageSize": 0, "newSinceLast"'), problems],
    ['a trailing comma', config.replace('"state/approved.json"\n', '"state/approved.json",\n'), syntax],
  ])('%s', async (name, content, shown) => {
    const dir = join(context.dir, `doc-${name.replace(/\W/g, '-')}`);
    await mkdir(dir);
    await writeFile(join(dir, 'ccs-bulk.config.json'), content);
    const run = await runCli(['export', '--report', 'approved', '--print-config'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(shown);
  });
});

describe('missing folders', () => {
  it('one that cannot be made stops the export before any request, naming every missing folder in one mkdir -p line', async () => {
    const blocked = join(context.dir, 'blocked');
    await writeFile(blocked, 'a file where a folder should be');
    const service = createServiceClient({ baseUrl: context.sandbox.url, token: context.sandbox.token });
    const requests = context.sandbox.stats.requests;
    try {
      const error = await refusal(exportClients({ service, out: join(blocked, 'reports', 'a.csv'), sinceLast: join(blocked, 'state', 'a.json') }));
      expect(error.code).toBe('output_unwritable');
      expect(error.message).toBe(
        `cannot create the folder ${join(blocked, 'reports')}: ENOTDIR; create the missing folders first: mkdir -p ${shellQuote(join(blocked, 'reports'))} ${shellQuote(join(blocked, 'state'))}`,
      );
    } finally {
      await service.close();
    }
    expect(context.sandbox.stats.requests).toBe(requests);
  });
});
