/**
 * The config file: flags > env > config file > defaults (table-tested through --print-config),
 * refused typos and secret values, and the README's example config run as `export --report`
 * against the sandbox.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCsv } from './export.helpers.js';
import { ROOT, runCliInProcess as runCli, useSandbox } from './helpers.js';

const context = useSandbox({ seed: 30 });

const SECRET = 'lk_live_config_test_secret_value';

interface Layers {
  flag?: string[];
  env?: Record<string, string>;
  config?: object;
}

/** Keys a config only found in the current directory may not hold: such a file is named with --config. */
const NAMED_ONLY = /"(proxy|caFile|clientCert|clientKey|logFile|out|state|newSinceLast)"/;

/** Runs `--print-config` in a fresh directory holding ccs-bulk.config.json (when given). */
async function printConfig(command: string[], layers: Layers): Promise<{ settings: Record<string, { value: unknown; from: string }>; stdout: string; dir: string }> {
  const dir = join(context.dir, `print-${Math.random().toString(36).slice(2)}`);
  await mkdir(dir);
  const text = layers.config && JSON.stringify(layers.config);
  if (text) await writeFile(join(dir, 'ccs-bulk.config.json'), text);
  const named = text && NAMED_ONLY.test(text) ? ['--config', 'ccs-bulk.config.json'] : [];
  const result = await runCli([...command, '--print-config', ...named, ...(layers.flag ?? [])], { cwd: dir, env: layers.env ?? {} });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return { settings: (JSON.parse(result.stdout) as { settings: Record<string, { value: unknown; from: string }> }).settings, stdout: result.stdout, dir };
}

describe('precedence: flag > env > config file > default', () => {
  const rows: [string, string[], string, Layers, unknown, string][] = [
    ['timeout, nothing given', ['export'], 'timeout', {}, 30, 'default'],
    ['timeout, config', ['export'], 'timeout', { config: { connection: { timeout: 60 } } }, 60, 'config'],
    ['timeout, flag over config', ['export'], 'timeout', { config: { connection: { timeout: 60 } }, flag: ['--timeout', '10'] }, 10, 'flag'],
    ['baseUrl, config', ['export'], 'baseUrl', { config: { connection: { baseUrl: 'https://c.example' } } }, 'https://c.example', 'config'],
    ['baseUrl, env over config', ['export'], 'baseUrl', { config: { connection: { baseUrl: 'https://c.example' } }, env: { CCS_BASE_URL: 'https://e.example' } }, 'https://e.example', 'env'],
    [
      'baseUrl, flag over env and config',
      ['export'],
      'baseUrl',
      { config: { connection: { baseUrl: 'https://c.example' } }, env: { CCS_BASE_URL: 'https://e.example' }, flag: ['--base-url', 'https://f.example'] },
      'https://f.example',
      'flag',
    ],
    ['caFile, env over config', ['check'], 'caFile', { config: { connection: { caFile: 'c.pem' } }, env: { CCS_CA_FILE: 'e.pem' } }, 'e.pem', 'env'],
    ['pageSize, export default in config', ['export'], 'pageSize', { config: { export: { pageSize: 50 } } }, 50, 'config'],
    ['pageSize, report over export default', ['export', '--report', 'r'], 'pageSize', { config: { export: { pageSize: 50 }, reports: { r: { pageSize: 20 } } } }, 20, 'config'],
    ['pageSize, flag over report', ['export', '--report', 'r'], 'pageSize', { config: { reports: { r: { pageSize: 20 } } }, flag: ['--page-size', '7'] }, 7, 'flag'],
    ['out of a report', ['export', '--report', 'r'], 'out', { config: { reports: { r: { out: 'r.csv' } } } }, 'r.csv', 'config'],
    ['out, nothing given', ['export'], 'out', {}, '-', 'default'],
    ['incremental report → since-last', ['export', '--report', 'r'], 'sinceLast', { config: { reports: { r: { out: 'a.csv', incremental: true, state: 's.json' } } } }, 's.json', 'config'],
    ['escapeFormulas false in config', ['export'], 'escapeFormulas', { config: { export: { escapeFormulas: false } } }, false, 'config'],
    ['escapeFormulas, flag over config', ['export'], 'escapeFormulas', { config: { export: { escapeFormulas: false } }, flag: ['--escape-formulas'] }, true, 'flag'],
    ['concurrency, import default in config', ['validate', 'x.csv'], 'concurrency', { config: { import: { concurrency: 16 } } }, '16', 'config'],
    ['concurrency, nothing given', ['import', 'x.csv'], 'concurrency', {}, 'auto', 'default'],
    ['dateFormat, flag over config', ['import', 'x.csv'], 'dateFormat', { config: { import: { dateFormat: 'DD/MM/YYYY' } }, flag: ['--date-format', 'MM/DD/YYYY'] }, 'MM/DD/YYYY', 'flag'],
    ['map, config', ['validate', 'x.csv'], 'map', { config: { import: { map: { name: 'Legal name' } } } }, ['name=Legal name'], 'config'],
    ['signingKey, env over config', ['import', 'x.csv'], 'signingKey', { config: { connection: { signingKeyFile: 'c.pem' } }, env: { CCS_SIGNING_KEY_FILE: 'e.pem' } }, 'e.pem', 'env'],
    ['retries, nothing given (check)', ['check'], 'retries', {}, 5, 'default'],
    ['maxRecordSize, nothing given', ['validate', 'x.csv'], 'maxRecordSize', {}, 1_048_576, 'default'],
    ['maxRecordSize, config', ['import', 'x.csv'], 'maxRecordSize', { config: { import: { maxRecordSize: 4096 } } }, 4096, 'config'],
    ['sheet, a number in config', ['validate', 'x.xlsx'], 'sheet', { config: { import: { sheet: 2 } } }, '2', 'config'],
    ['sheet, flag over config', ['validate', 'x.xlsx'], 'sheet', { config: { import: { sheet: 2 } }, flag: ['--sheet', 'Clients'] }, 'Clients', 'flag'],
    ['headerRow, config', ['import', 'x.csv'], 'headerRow', { config: { import: { headerRow: 3 } } }, 3, 'config'],
    ['logFile, import config', ['import', 'x.csv'], 'logFile', { config: { import: { logFile: 'i.log' } } }, 'i.log', 'config'],
    ['logFile, flag over import config', ['import', 'x.csv'], 'logFile', { config: { import: { logFile: 'i.log' } }, flag: ['--log-file', 'f.log'] }, 'f.log', 'flag'],
    ['progressInterval, nothing given', ['export'], 'progressInterval', {}, 5, 'default'],
    ['progressInterval, import config', ['import', 'x.csv'], 'progressInterval', { config: { import: { progressInterval: 60 } } }, 60, 'config'],
    ['progressInterval, flag over config', ['export'], 'progressInterval', { config: { export: { progressInterval: 60 } }, flag: ['--progress-interval', '1'] }, 1, 'flag'],
    ['quiet, export config', ['export'], 'quiet', { config: { export: { quiet: true } } }, true, 'config'],
    ['quiet, --no-quiet over config', ['export'], 'quiet', { config: { export: { quiet: true } }, flag: ['--no-quiet'] }, false, 'flag'],
    ['quiet, -q over config', ['import', 'x.csv'], 'quiet', { config: { import: { quiet: false } }, flag: ['-q'] }, true, 'flag'],
    ['json, import config', ['validate', 'x.csv'], 'json', { config: { import: { json: true } } }, true, 'config'],
    ['json, a report takes the export section', ['export', '--report', 'r'], 'json', { config: { export: { json: true }, reports: { r: {} } } }, true, 'config'],
  ];
  // --print-config shows paths absolute: here, from the directory holding the config file.
  const PATHS = new Set(['caFile', 'signingKey', 'logFile', 'out', 'sinceLast']);
  it.each(rows)('%s', async (_name, command, key, layers, value, from) => {
    const { settings, dir } = await printConfig(command, layers);
    const shown = PATHS.has(key) && typeof value === 'string' && value !== '-' ? join(dir, value) : value;
    expect(settings[key]).toEqual({ value: shown, from });
  });

  it('the token: --token-file > CCS_TOKEN > tokenEnv, always [redacted]', async () => {
    const config = { connection: { tokenEnv: 'MY_CCS_TOKEN' } };
    const fromConfig = await printConfig(['export'], { config, env: { MY_CCS_TOKEN: SECRET } });
    expect(fromConfig.settings.token).toEqual({ value: '[redacted]', from: 'config' });
    expect(fromConfig.settings.tokenEnv).toEqual({ value: 'MY_CCS_TOKEN', from: 'config' });
    const fromEnv = await printConfig(['export'], { config, env: { MY_CCS_TOKEN: SECRET, CCS_TOKEN: SECRET } });
    expect(fromEnv.settings.token).toEqual({ value: '[redacted]', from: 'env' });
    const fromFlag = await printConfig(['export'], { config, env: { CCS_TOKEN: SECRET }, flag: ['--token-file', 'token.txt'] });
    expect(fromFlag.settings.token).toEqual({ value: '[redacted]', from: 'flag' });
    for (const output of [fromConfig, fromEnv, fromFlag]) expect(output.stdout).not.toContain(SECRET);
  });

  it('--config beats CCS_CONFIG, which beats ./ccs-bulk.config.json', async () => {
    const dir = join(context.dir, 'which-file');
    await mkdir(dir);
    await writeFile(join(dir, 'ccs-bulk.config.json'), JSON.stringify({ connection: { retries: 1 } }));
    await writeFile(join(dir, 'env.json'), JSON.stringify({ connection: { retries: 2 } }));
    await writeFile(join(dir, 'flag.json'), JSON.stringify({ connection: { retries: 3 } }));
    const retries = async (args: string[], env: Record<string, string>) => {
      const result = await runCli(['export', '--print-config', ...args], { cwd: dir, env });
      const printed = JSON.parse(result.stdout) as { config: string; settings: { retries: { value: number } } };
      return [printed.config, printed.settings.retries.value];
    };
    expect(await retries([], {})).toEqual(['ccs-bulk.config.json', 1]);
    expect(await retries([], { CCS_CONFIG: 'env.json' })).toEqual(['env.json', 2]);
    expect(await retries(['--config', 'flag.json'], { CCS_CONFIG: 'env.json' })).toEqual(['flag.json', 3]);
  });
});

describe('a config file that cannot be used: exit 2, naming the key and the file', () => {
  const cases: [string, unknown, string[], RegExp][] = [
    ['a typo', { export: { pagesize: 3 } }, ['export'], /^ccs-bulk: error: config_invalid: bad\.json: export\.pagesize: unknown key \(did you mean pageSize\?\); keys here are format, .* \[config_invalid\]$/m],
    ['a wrong type', { reports: { r: { pageSize: 'ten' } } }, ['export'], /config_invalid: bad\.json: reports\.r\.pageSize: must be a number \(got a string\) \[config_invalid\]/],
    ['a token value', { connection: { token: SECRET } }, ['export'], /config_invalid: bad\.json: connection\.token: a token or key value is refused.*tokenFile.*tokenEnv.*\[config_invalid\]/],
    ['a token in tokenEnv', { connection: { tokenEnv: SECRET.replace(/_/g, '-') } }, ['export'], /config_invalid: bad\.json: connection\.tokenEnv: must be the NAME of an environment variable/],
    ['a token that looks like a name in tokenEnv', { connection: { tokenEnv: SECRET } }, ['export'], /config_invalid: bad\.json: connection\.tokenEnv: holds a token/],
    ['a key value', { connection: { signingKeyFile: '-----BEGIN PRIVATE KEY-----\nMIIE' } }, ['import', 'x.csv'], /config_invalid: bad\.json: connection\.signingKeyFile: holds a private key/],
    ['incremental without state', { reports: { r: { incremental: true } } }, ['export'], /config_invalid: bad\.json: reports\.r\.state: incremental: true needs "state"/],
    ['not JSON', '{ "connection": ', ['validate', 'x.csv'], /config_invalid: bad\.json: not valid JSON at line 1, column 17: Unexpected end of JSON input/],
    ['an unknown report', { reports: { daily: {} } }, ['export', '--report', 'weekly'], /--report weekly: no such report in bad\.json; reports are daily \[report_unknown\]/],
    ['quiet in a report (it is the export section\'s)', { reports: { r: { quiet: true } } }, ['export'], /config_invalid: bad\.json: reports\.r\.quiet: unknown key here: "quiet" goes in the "export" or "import" section/],
    ['a results path (flag only)', { import: { results: 'r.csv' } }, ['validate', 'x.csv'], /config_invalid: bad\.json: import\.results: unknown key; keys here are /],
  ];
  it.each(cases)('%s', async (_name, content, command, message) => {
    const dir = join(context.dir, `bad-${Math.random().toString(36).slice(2)}`);
    await mkdir(dir);
    await writeFile(join(dir, 'bad.json'), typeof content === 'string' ? content : JSON.stringify(content));
    const result = await runCli([...command, '--config', 'bad.json'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toContain(SECRET);
    expect(result.stderr).not.toContain(SECRET.replace(/_/g, '-'));
    expect(result.stderr).not.toContain('    at ');
  });

  it('a --config file that does not exist is an error; a missing ./ccs-bulk.config.json is not', async () => {
    const missing = await runCli(['export', '--print-config', '--config', 'nowhere.json'], { cwd: context.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read config nowhere\.json: ENOENT \[config_invalid\]/);
    const none = await runCli(['export', '--print-config'], { cwd: context.dir });
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ config: null });
  });
});

describe('run settings from the file take effect', () => {
  it('import: headerRow, maxRecordSize, quiet, json, logFile; export: quiet, json', async () => {
    const dir = join(context.dir, 'run-settings');
    await mkdir(dir);
    const config = {
      import: { headerRow: 2, maxRecordSize: 4096, quiet: true, json: true, logFile: 'v.log' },
      export: { quiet: true, json: true },
    };
    await writeFile(join(dir, 'ccs-bulk.config.json'), JSON.stringify(config));
    await writeFile(join(dir, 'in.csv'), 'Clients, nightly drop\nname,email,country,address\nAda,ada@example.com,DE,Street 1\n');
    // A found config may not name the log: this one is named.
    const validate = await runCli(['validate', 'in.csv', '--config', 'ccs-bulk.config.json'], { cwd: dir });
    expect(validate.stderr).toBe('');
    expect(validate.code).toBe(0);
    const summary = JSON.parse(validate.stdout) as { counts: { valid: number }; source: { header: { line: number; source: string } } };
    expect(summary.counts.valid).toBe(1);
    expect(summary.source.header).toMatchObject({ line: 2, source: 'option' });
    expect(await readFile(join(dir, 'v.log'), 'utf8')).toMatch(/"command":"validate".*"run_finished"/s);
    // maxRecordSize: a record over 4096 bytes is refused as the file says.
    await writeFile(join(dir, 'big.csv'), `title\nname,email,country,address\n"${'x'.repeat(5000)}",a@example.com,DE,S\n`);
    const big = await runCli(['validate', 'big.csv', '--overwrite', '--config', 'ccs-bulk.config.json'], { cwd: dir });
    expect(big.code).toBe(2);
    expect(big.stderr).toMatch(/larger than the limit of 4 KiB/);

    const exported = await runCli(['export', '--config', 'ccs-bulk.config.json', '--out', 'all.csv'], { cwd: dir, env: { CCS_BASE_URL: context.sandbox.url, CCS_TOKEN: context.sandbox.token } });
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ out: 'all.csv', rows: context.sandbox.store.all().length });
  });
});

/** The example config the README points to (docs/scheduled-reports.md, "An example file"). */
function readmeConfig(): { reports: Record<string, { out: string }>; connection: { tokenEnv: string } } {
  const doc = readFileSync(join(ROOT, 'docs', 'scheduled-reports.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### An example file'));
  const block = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('docs/scheduled-reports.md has no example config');
  return JSON.parse(block) as ReturnType<typeof readmeConfig>;
}

describe("the README's example config, run against the sandbox", () => {
  it('export --report NAME writes the report, its state and its log, with env over the file for the URL', async () => {
    const config = readmeConfig();
    const dir = join(context.dir, 'readme-example');
    // No reports/ nor state/: a first run makes them.
    await mkdir(dir);
    await writeFile(join(dir, 'ccs-bulk.config.json'), JSON.stringify(config));
    // The file names https://ccs.example.com; CCS_BASE_URL (env) wins over it.
    const env = { CCS_BASE_URL: context.sandbox.url, [config.connection.tokenEnv]: context.sandbox.token };
    const weekly = await runCli(['export', '--config', 'ccs-bulk.config.json', '--report', 'weekly-approved', '--quiet', '--json'], { cwd: dir, env });
    expect(weekly.stderr).toBe('');
    expect(weekly.code).toBe(0);
    const summary = JSON.parse(weekly.stdout) as { out: string; rows: number; format: string; filters: { status: string[] } };
    expect(summary.format).toBe('xlsx');
    expect(summary.filters.status).toEqual(['approved']);
    // The file's paths are read from its folder: the summary names the file absolute.
    expect(summary.out.startsWith(join(dir, 'reports', 'weekly-approved-'))).toBe(true);
    expect(summary.out).toMatch(/weekly-approved-\d{4}-\d\d-\d\d\.xlsx$/);
    const approved = context.sandbox.store.all().filter((client) => client.status === 'approved').length;
    expect(summary.rows).toBe(approved);
    // A status report keeps the ids it reported (new-since-last's state, not a JSON window).
    const state = await readFile(join(dir, 'state', 'weekly-approved.json'));
    expect(state.subarray(0, 30).toString('latin1')).toBe('ccs-bulk new-since-last state\n');

    const nightly = await runCli(['export', '--config', 'ccs-bulk.config.json', '--report', 'nightly-new', '--quiet'], { cwd: dir, env });
    expect(nightly.code).toBe(0);
    const files = await readdir(join(dir, 'reports'));
    const gz = files.find((name) => /^nightly-new-\d{4}-\d\d-\d\dT\d{6}Z\.csv\.gz$/.test(name));
    expect(gz).toBeDefined();
    const rows = parseCsv(gunzipSync(await readFile(join(dir, 'reports', gz!))).toString('utf8'));
    expect(rows).toHaveLength(context.sandbox.store.all().length);
    expect(Object.keys(rows[0]!)).toEqual(['id', 'name', 'status', 'credit_status', 'created_at']);

    // A second run of the same report: incremental, nothing new, into a name given on the CLI.
    const again = await runCli(['export', '--config', 'ccs-bulk.config.json', '--report', 'nightly-new', '--out', 'reports/{report}-again.csv', '--quiet', '--json'], { cwd: dir, env });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 0, out: 'reports/nightly-new-again.csv' });

    const log = await readFile(join(dir, 'ccs-bulk.log'), 'utf8');
    expect(log).toContain('"run_finished"');
    expect(log).not.toContain(context.sandbox.token);
  });
});
