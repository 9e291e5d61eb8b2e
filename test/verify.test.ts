/**
 * `ccs-bulk verify`: a real import into the project's sandbox, then verify against it. A
 * complete migration is proven (exit 0, evidence whose checksum file checks); each way one
 * can be incomplete is planted and found, named and counted (exit 1): a row's person on the
 * service twice, a row without its results line, a results line naming a client the service
 * does not have, a source value changed since the import, a client no results file explains.
 * Each test has a sandbox of its own: verify lists every client, and one test's planted
 * clients must not be another's problems.
 */
import { createHash, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import yargs from 'yargs';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyCommand } from '../src/cli/verify-command.js';
import type { Problem } from '../src/verify/problems.js';
import { isCcsError, UsageError } from '../src/errors.js';
import { importClients, type ImportSettings } from '../src/import/run-import.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { createServiceClient } from '../src/service/client.js';
import { createSigner } from '../src/service/signing.js';
import { CLIENT_HEADER, cliEnv, makeTempDir, readResults, ROOT, runCliInProcess, startTestSandbox, validRows } from './helpers.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Migration {
  sandbox: Sandbox;
  dir: string;
  source: string;
  results: string;
  /** The environment pointing verify at the sandbox (no signing key: verify signs nothing). */
  env: Record<string, string>;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

/** A sandbox of its own and a folder, both removed after the test. */
async function workspace() {
  const sandbox = await startTestSandbox();
  const temp = await makeTempDir();
  open.push(async () => {
    await sandbox.close();
    await temp.cleanup();
  });
  return { sandbox, temp };
}

/** A sandbox of its own, a folder, and `rows` imported by the real import (the library). */
async function migrate(rows: string[][], settings: Partial<ImportSettings> = {}, header = CLIENT_HEADER): Promise<Migration> {
  const { sandbox, temp } = await workspace();
  const source = join(temp.dir, 'clients.csv');
  await writeFile(source, stringify([header, ...rows]));
  await importInto(sandbox, { file: source, ...settings });
  return { sandbox, dir: temp.dir, source, results: `${source}.results.csv`, env: { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token } };
}

async function importInto(sandbox: Sandbox, settings: ImportSettings): Promise<void> {
  const service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, signer: createSigner(createPrivateKey(sandbox.privateKeyPem!)) });
  try {
    await importClients({ concurrency: 4, ...settings, service });
  } finally {
    await service.close();
  }
}

/** The verify command as cli.ts will run it: its yargs definition and handler, a thrown error mapped as main.ts maps it. */
async function verify(args: string[], env: Record<string, string>, signal?: AbortSignal): Promise<{ code: number; stdout: string; stderr: string }> {
  const [stdout, stderr] = [new PassThrough(), new PassThrough()];
  const out = { stdout: '', stderr: '' };
  stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const run = { argv: ['verify', ...args], env: cliEnv(env), io: { stdout, stderr, signal }, exitCode: 0, parsing: undefined };
  let code: number;
  try {
    await verifyCommand(yargs(run.argv), run)
      .strict()
      .exitProcess(false)
      .fail((message, error) => {
        if (error) throw error;
        throw new UsageError(message ?? 'invalid command line', 'usage');
      })
      .parseAsync();
    code = run.exitCode;
  } catch (error) {
    if (!isCcsError(error)) throw error;
    out.stderr += `ccs-bulk: error: ${error.message} [${error.code}]\n`;
    code = error.exitCode;
  }
  return { code, ...out };
}

/** A problem as --json prints it. */
type JsonProblem = Problem;

/** The results file's created lines: row → client id. */
async function createdIds(results: string): Promise<Map<number, string>> {
  return new Map((await readResults(results)).filter((line) => line[1] === 'created').map((line) => [Number(line[0]), line[2]!]));
}

/** Rewrites a results file's lines (its header kept), as CSV: the addresses span two lines. */
async function editResults(path: string, edit: (lines: string[][]) => string[][]): Promise<void> {
  const [header, ...lines] = parse(await readFile(path), { relax_column_count: true }) as string[][];
  await writeFile(path, stringify([header!, ...edit(lines)]));
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

describe('verify: a complete migration is proven', () => {
  it('every row on the service once with equal fields, or accounted for: exit 0, and evidence whose checksum file checks', async () => {
    const rows = validRows(6);
    rows.push(['', 'bad-email', 'DE', 'Street 7', 'EUR', '2024-05-17']); // row 7: invalid
    rows.push([...rows[1]!]); // row 8: row 2 again, a duplicate
    const m = await migrate(rows);
    const evidence = join(m.dir, 'audit', 'evidence.json');
    await mkdir(join(m.dir, 'audit'));
    const run = await verify([m.source, '--evidence', evidence, '--json'], m.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/PROVEN: 8 rows of 1 source: 6 on the service once with equal fields, 2 accounted for \(1 invalid, 1 duplicate\); no other client among the 6 listed/);
    const json = JSON.parse(run.stdout);
    expect(json).toMatchObject({ verdict: 'proven', counts: { rows: 8, proven: 6, accounted: { invalid: 1, duplicate: 1 }, problems_total: 0 }, problems: [] });

    // The checksum file names both files in sha256sum's format, with the hashes of their bytes.
    const checksum = await readFile(`${evidence}.sha256`, 'utf8');
    const text = await readFile(evidence);
    const summary = await readFile(join(m.dir, 'audit', 'evidence.html'));
    expect(checksum).toBe(`${sha256(text)}  evidence.json\n${sha256(summary)}  evidence.html\n`);
    expect(json.evidence.sha256).toBe(sha256(text));
    expect(run.stderr).toContain(`SHA-256 ${sha256(text)}`);
    // Private, like the results file: the evidence holds client data.
    expect((await stat(evidence)).mode & 0o777).toBe(0o600);

    const doc = JSON.parse(text.toString('utf8'));
    expect(doc).toMatchObject({
      ccs_bulk_verify: 1,
      verdict: 'proven',
      tool: { name: 'ccs-bulk', version: VERSION },
      service: { base_url: m.sandbox.url, clients_listed: 6 },
      sources: [{ path: m.source, rows: 8, proven: 6, sha256: sha256(await readFile(m.source)), size: (await stat(m.source)).size }],
      results_files: [{ path: m.results, lines: 8, sha256: sha256(await readFile(m.results)), meta: { written_by: 'import', service: m.sandbox.url } }],
      counts: { rows: 8, proven: 6, problems_total: 0, clients_listed: 6, clients_claimed_listed: 6 },
      problems: [],
    });
    expect(Date.parse(doc.started_at)).toBeLessThanOrEqual(Date.parse(doc.finished_at));
    expect(summary.toString('utf8')).toContain('Migration verified: proven');
    // The token never reaches the evidence, its summary or the output.
    for (const output of [text.toString('utf8'), summary.toString('utf8'), run.stdout, run.stderr]) expect(output).not.toContain(m.sandbox.token);
  });

  it("reads a source with the import's own flags: a --map the import had is needed again (exit 2 without it)", async () => {
    const header = ['Firma', 'email', 'country', 'address', 'currency', 'application_date'];
    const m = await migrate(validRows(3), { map: { name: 'Firma' } }, header);
    const without = await verify([m.source], m.env);
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(/missing required column name.*--map field=Header/s);
    const run = await verify([m.source, '--map', 'name=Firma'], m.env);
    expect(run.code, run.stderr).toBe(0);
  });

  it("finds the shards' results files beside the source, and reads one out of row order from a sorted copy, leaving it as it is", async () => {
    const { sandbox, temp } = await workspace();
    const source = join(temp.dir, 'clients.csv');
    await writeFile(source, stringify([CLIENT_HEADER, ...validRows(12)]));
    for (const index of [1, 2]) await importInto(sandbox, { file: source, shard: { index, count: 2 } });
    const shard = join(temp.dir, 'clients.csv.results.shard-2-of-2.csv');
    // Its lines in reverse: as a run killed before the end leaves them, nearly never in order.
    await editResults(shard, (lines) => lines.reverse());
    const before = await readFile(shard);
    const run = await verify([source, '--json'], { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token });
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.results_files.map((file: { path: string }) => file.path)).toEqual([
      join(temp.dir, 'clients.csv.results.shard-1-of-2.csv'),
      shard,
    ]);
    expect(json.counts).toMatchObject({ rows: 12, proven: 12 });
    expect(json.notes).toEqual([expect.stringMatching(/shard-2-of-2\.csv was not in row order .*read from a sorted copy/)]);
    expect(await readFile(shard)).toEqual(before);
  });
});

describe('verify: each way a migration is incomplete is found, named and counted (exit 1)', () => {
  it("a row's person on the service twice: a second client with the row's e-mail (other capitals) is named beside the row's", async () => {
    const m = await migrate(validRows(4));
    const ids = await createdIds(m.results);
    const second = m.sandbox.store.insert({ name: 'Client 3, Ltd', email: 'CLIENT3@Example.com', country: 'DE', address: 'Street 3\nTown 3' });
    const run = await verify([m.source, '--json'], m.env);
    expect(run.code).toBe(1);
    const { problems, counts } = JSON.parse(run.stdout) as { problems: JsonProblem[]; counts: Record<string, unknown> };
    expect(counts).toMatchObject({ rows: 4, proven: 3, problems: { twice: 1, unexplained: 1, missing: 0, changed: 0 } });
    expect(problems).toContainEqual(
      expect.objectContaining({ kind: 'twice', source: m.source, row: 3, client_id: ids.get(3), other_client_ids: [second.id] }),
    );
    expect(problems).toContainEqual(expect.objectContaining({ kind: 'unexplained', client_id: second.id }));
    expect(run.stderr).toMatch(/NOT PROVEN: 2 problems \(1 twice, 1 unexplained\)/);
    expect(run.stderr).toContain(`twice       ${m.source}:3 (line 6): the service holds 2 clients with this row's e-mail client3@example.com: ${ids.get(3)} of the results, and ${second.id}`);
  });

  it('a row with no results line, and a results line naming a client the service does not have', async () => {
    const m = await migrate(validRows(5));
    const ids = await createdIds(m.results);
    await editResults(m.results, (lines) =>
      lines.filter((line) => line[0] !== '3').map((line) => (line[0] === '4' ? [line[0], line[1]!, 'cli_gone', ...line.slice(3)] : line)),
    );
    const run = await verify([m.source, '--json'], m.env);
    expect(run.code).toBe(1);
    const { problems, counts } = JSON.parse(run.stdout) as { problems: JsonProblem[]; counts: Record<string, unknown> };
    expect(counts).toMatchObject({ rows: 5, proven: 3, problems: { missing: 2, unexplained: 2, twice: 0, changed: 0 } });
    expect(problems).toContainEqual(expect.objectContaining({ kind: 'missing', row: 3, message: expect.stringMatching(/no results file has a line for this row/) }));
    expect(problems).toContainEqual(
      expect.objectContaining({ kind: 'missing', row: 4, client_id: 'cli_gone', message: expect.stringMatching(/the service has no such client/) }),
    );
    // Their real clients are on the service, created by no line now.
    for (const row of [3, 4]) expect(problems).toContainEqual(expect.objectContaining({ kind: 'unexplained', client_id: ids.get(row) }));
    expect(run.stderr).toMatch(new RegExp(`missing     ${escape(m.source)}:3 \\(line 6\\): no results file has a line`));
  });

  it("a source value changed since the import: the field, the service's value and the row's", async () => {
    const rows = validRows(4);
    const m = await migrate(rows);
    const ids = await createdIds(m.results);
    rows[1]![3] = 'Street 2b\nTown 2';
    rows[2]![2] = 'AT';
    await writeFile(m.source, stringify([CLIENT_HEADER, ...rows]));
    const evidence = join(m.dir, 'changed.json');
    const run = await verify([m.source, '--json', '--evidence', evidence], m.env);
    expect(run.code).toBe(1);
    const { problems, counts } = JSON.parse(run.stdout) as { problems: JsonProblem[]; counts: Record<string, unknown> };
    // Each changed row twice: the field the service returns, and the body the row makes now against the hash of the one sent.
    expect(counts).toMatchObject({ rows: 4, proven: 2, rows_with_problems: 2, bodies_checked: 4, bodies_unrecorded: 0, problems: { changed: 4, twice: 0, missing: 0, unexplained: 0 } });
    expect(problems).toEqual([
      expect.objectContaining({ kind: 'changed', row: 2, client_id: ids.get(2), field: 'address', service_value: 'Street 2 Town 2', source_value: 'Street 2b Town 2' }),
      expect.objectContaining({ kind: 'changed', row: 2, client_id: ids.get(2), field: 'body' }),
      expect.objectContaining({ kind: 'changed', row: 3, client_id: ids.get(3), field: 'country', service_value: 'DE', source_value: 'AT' }),
      expect.objectContaining({ kind: 'changed', row: 3, client_id: ids.get(3), field: 'body' }),
    ]);
    expect(run.stderr).toMatch(/changed {5}.*clients\.csv:2 \(line 4\) address: address differs: the service has "Street 2 Town 2", the row "Street 2b Town 2"/);
    // The source changed since the import: said, with the SHA-256 the sidecar recorded.
    expect(run.stderr).toMatch(/note: .*clients\.csv changed since .*results\.csv was written/);
    const doc = JSON.parse(await readFile(evidence, 'utf8'));
    expect(doc.problems).toEqual(problems);
    expect(doc.verdict).toBe('problems');
  });

  it('a field the service never returns (the application date) changed since the import: found by the body hash alone', async () => {
    const rows = validRows(3);
    const m = await migrate(rows);
    const ids = await createdIds(m.results);
    const trail = await readFile(`${m.results}.trail.csv`, 'utf8');
    expect(trail.split('\n')[0]).toBe('row,line,outcome,at,body_sha256');
    // Row 1 starts on line 2 (the header is line 1): the line the person fixing it finds.
    expect(trail).toMatch(/^1,2,created,\d{4}-\d\d-\d\dT[\d:.]+Z,[0-9a-f]{64}$/m);
    rows[0]![5] = '2024-06-01';
    await writeFile(m.source, stringify([CLIENT_HEADER, ...rows]));
    const run = await verify([m.source, '--json'], m.env);
    expect(run.code).toBe(1);
    const { problems, counts } = JSON.parse(run.stdout) as { problems: JsonProblem[]; counts: Record<string, unknown> };
    expect(counts).toMatchObject({ rows: 3, proven: 2, bodies_checked: 3, problems: { changed: 1 } });
    expect(problems).toEqual([
      expect.objectContaining({ kind: 'changed', row: 1, client_id: ids.get(1), field: 'body', message: expect.stringContaining('application date') }),
    ]);
  });

  it('a results line for a row the source no longer has: its client is unexplained, and a note says so', async () => {
    const rows = validRows(4);
    const m = await migrate(rows);
    const ids = await createdIds(m.results);
    await writeFile(m.source, stringify([CLIENT_HEADER, ...rows.slice(0, 3)]));
    const run = await verify([m.source, '--json'], m.env);
    expect(run.code).toBe(1);
    const { problems, counts, notes } = JSON.parse(run.stdout) as { problems: JsonProblem[]; counts: Record<string, unknown>; notes: string[] };
    expect(counts).toMatchObject({ rows: 3, proven: 3, stray_lines: 1, problems: { unexplained: 1, twice: 0, missing: 0, changed: 0 } });
    expect(problems).toEqual([
      expect.objectContaining({ kind: 'unexplained', client_id: ids.get(4), message: expect.stringMatching(/for row 4 \(created\), but .*clients\.csv has no row 4/) }),
    ]);
    expect(notes).toContainEqual(expect.stringMatching(/clients\.csv: 1 results line is for rows the source does not have/));
  });

  it('a client no results file created or matched, within the listing window', async () => {
    const m = await migrate(validRows(3));
    const extra = m.sandbox.store.insert({ name: 'Walk-in', email: 'walk-in@example.com', country: 'FR', address: 'Rue 1' });
    // Created long before: outside a window from 2020 on, so only the walk-in is unexplained there.
    m.sandbox.store.insert({ name: 'Old', email: 'old@example.com', country: 'FR', address: 'Rue 2', created_at: '2019-06-01T00:00:00Z' });
    const run = await verify([m.source, '--json', '--created-from', '2020-01-01'], m.env);
    expect(run.code).toBe(1);
    const { problems, counts } = JSON.parse(run.stdout) as { problems: JsonProblem[]; counts: Record<string, unknown> };
    expect(counts).toMatchObject({ rows: 3, proven: 3, clients_listed: 4, problems: { unexplained: 1, twice: 0, missing: 0, changed: 0 } });
    expect(problems).toEqual([
      expect.objectContaining({ kind: 'unexplained', client_id: extra.id, message: expect.stringMatching(/walk-in@example\.com.*created or matched by no results file/) }),
    ]);
    expect(run.stderr).toMatch(new RegExp(`unexplained client ${extra.id} \\(walk-in@example\\.com`));
  });
});

describe('verify: usage', () => {
  it('exit 2 without a results file, for evidence already there, and for a bad window', async () => {
    const m = await migrate(validRows(2));
    const other = join(m.dir, 'other.csv');
    await writeFile(other, stringify([CLIENT_HEADER, ...validRows(1)]));
    const none = await verify([other], m.env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no results file for .*other\.csv: neither .*other\.csv\.results\.csv nor a shard's \(other\.csv\.results\.shard-K-of-N\.csv\)/);
    const evidence = join(m.dir, 'kept.json');
    await writeFile(evidence, '{}');
    const kept = await verify([m.source, '--evidence', evidence], m.env);
    expect(kept.code).toBe(2);
    expect(kept.stderr).toMatch(/kept\.json exists: .*--overwrite/);
    expect(await readFile(evidence, 'utf8')).toBe('{}');
    expect((await verify([m.source, '--evidence', evidence, '--overwrite'], m.env)).code).toBe(0);
    const window = await verify([m.source, '--created-from', '2025-13'], m.env);
    expect(window.code).toBe(2);
    expect(window.stderr).toMatch(/--created-from "2025-13": month 13 does not exist/);
  });
});

describe('verify: stopped', () => {
  it('Ctrl-C: exit 3, and no evidence file (a partial proof is none)', async () => {
    const m = await migrate(validRows(3));
    const evidence = join(m.dir, 'stopped.json');
    const run = await verify([m.source, '--evidence', evidence], m.env, AbortSignal.abort());
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/verify interrupted \[interrupted\]/);
    await expect(stat(evidence)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('verify on the command line', () => {
  it('ccs-bulk verify runs as registered in cli.ts', async () => {
    const m = await migrate(validRows(2));
    const run = await runCliInProcess(['verify', m.source, '--json'], { env: m.env });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ verdict: 'proven', counts: { rows: 2, proven: 2 } });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
