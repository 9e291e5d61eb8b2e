import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/cli.js';
import { ServiceError } from '../src/errors.js';
import { AnswerStreak, OpeningAnswers, SYSTEMIC_STREAK } from '../src/import/send/systemic.js';
import { generateRsaKeyPair } from '../src/service/signing.js';
import { CLIENT_HEADER, makeTempDir, readResults, validRows } from './helpers.js';

// A service that answers every Create Client with something ccs-bulk refuses stops the run
// once the last 20 answers in a row are that same refusal (or every answer of a shorter run),
// rather than failing the whole file one request at a time.

type Mode = 'no_id' | 'redirect' | 'too_large';
let mode: Mode = 'no_id';
let requests = 0;
let server: Server;
let base = '';
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let keyFile = '';

// Built once: a 200 whose body is over the client's 4 MiB limit.
const HUGE = JSON.stringify({ status: 'ok', timestamp: 1, data: { id: 'c_1', padding: 'x'.repeat(5 * 1024 * 1024) } });

beforeAll(async () => {
  temp = await makeTempDir();
  keyFile = join(temp.dir, 'private.pem');
  await writeFile(keyFile, (await generateRsaKeyPair()).privateKeyPem, { mode: 0o600 });
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.method === 'GET') {
        // List Clients (who the service holds, before the first row) answers well: an empty service.
        const page = { status: 'ok', timestamp: '2026-01-01T00:00:00Z', data: { page: 0, size: 100, clients: [] } };
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page));
        return;
      }
      requests++;
      if (mode === 'redirect') {
        response.writeHead(302, { location: 'http://127.0.0.1:1/login' }).end();
      } else if (mode === 'too_large') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(HUGE);
      } else {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', timestamp: 1, data: {} }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await temp.cleanup();
});

function sink(): Writable & { text: string } {
  const out = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        out.text += String(chunk);
        done();
      },
    }),
    { text: '' },
  );
  return out;
}

let files = 0;
async function importAgainst(serverMode: Mode, rows: number) {
  mode = serverMode;
  files++;
  const file = join(temp.dir, `systemic-${files}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...validRows(rows, 1000 * files)]));
  const before = requests;
  const stdout = sink();
  const stderr = sink();
  const env = { CCS_BASE_URL: base, CCS_TOKEN: 'lk_sandbox_systemic_test_token', CCS_SIGNING_KEY_FILE: keyFile };
  const code = await runCli(['import', file, '--json', '--concurrency', '2', '--retries', '0'], env, { stdout, stderr });
  const lines = await readResults(`${file}.results.csv`);
  return { code, summary: JSON.parse(stdout.text), stderr: stderr.text, lines, requests: requests - before, file };
}

describe('systemic bad answers stop the run (exit 3, resumable)', () => {
  it.each<[Mode, string, RegExp]>([
    ['no_id', 'bad_response', /data\.id|client|id/i],
    ['redirect', 'redirect_refused', /redirect|302/i],
    ['too_large', 'response_too_large', /MiB|large|bytes/i],
  ])('%s on every answer → stops after %s ×20, the rest not_attempted', async (serverMode, code, example) => {
    const rows = 200;
    const run = await importAgainst(serverMode, rows);
    expect(run.code).toBe(3);
    expect(run.summary.stopped).toMatchObject({ reason: 'systemic_response', code: 'systemic_response' });
    expect(run.summary.stopped.message).toContain(`all refused the same way (${code})`);
    expect(run.summary.stopped.message).toMatch(example);
    // 20 in a row, plus at most what was in flight when the 20th came back.
    expect(run.summary.counts.failed).toBeGreaterThanOrEqual(SYSTEMIC_STREAK);
    expect(run.summary.counts.failed).toBeLessThan(SYSTEMIC_STREAK + 10);
    expect(run.summary.counts.failed + run.summary.counts.not_attempted).toBe(rows);
    expect(run.requests).toBeLessThan(SYSTEMIC_STREAK + 10);
    expect(run.lines.filter((line) => line[1] === 'failed').every((line) => line[7] === code)).toBe(true);
    expect(run.stderr).toMatch(/to continue: ccs-bulk import .* --resume/);
  });

  it('a run of fewer than 20 rows whose every answer is the same refusal stops too', async () => {
    const run = await importAgainst('no_id', 5);
    expect(run.code).toBe(3);
    expect(run.summary.counts.failed).toBe(5);
    expect(run.summary.stopped.message).toContain("last 5 answers were all refused the same way (bad_response)");
  });
});

describe('AnswerStreak', () => {
  const streakOf = (codes: (string | undefined)[]) => {
    const streak = new AnswerStreak();
    let stoppedAt: number | undefined;
    codes.forEach((code, i) => {
      if (streak.answer(code as never, i + 1, `message ${i + 1}`) && stoppedAt === undefined) stoppedAt = i + 1;
    });
    return { stoppedAt, end: streak.systemic() };
  };
  const times = (n: number, code: string | undefined) => Array.from({ length: n }, () => code);

  it.each<[string, (string | undefined)[], number | undefined, { code: string; count: number } | undefined]>([
    ['20 of the same refusal stop at the 20th', times(25, 'bad_response'), 20, { code: 'bad_response', count: 25 }],
    ['19 then a success: no stop', [...times(19, 'bad_response'), undefined, ...times(5, 'bad_response')], undefined, undefined],
    ['a different refusal restarts the count', [...times(10, 'bad_response'), ...times(20, 'redirect_refused')], 30, { code: 'redirect_refused', count: 20 }],
    ['a service error (422) is not a refusal', [...times(10, 'bad_response'), 'invalid_request', ...times(10, 'bad_response')], undefined, undefined],
    ['fewer than 20, all the same: systemic at the end', times(3, 'response_too_large'), undefined, { code: 'response_too_large', count: 3 }],
    ['fewer than 20, one success first: not systemic', [undefined, ...times(3, 'bad_response')], undefined, undefined],
    ['no answers: nothing', [], undefined, undefined],
  ])('%s', (_name, codes, stoppedAt, end) => {
    const result = streakOf(codes);
    expect(result.stoppedAt).toBe(stoppedAt);
    if (end === undefined) expect(result.end).toBeUndefined();
    else expect(result.end).toMatchObject(end);
  });
});

describe('OpeningAnswers: the first answers, while every one is 404/405', () => {
  type Step = number | 'ok';
  /** Feeds answers in order; each row's fate: held (undefined yet), failed, unsent, or recorded by the caller. */
  const run = (steps: Step[], end = false) => {
    const opening = new OpeningAnswers();
    const fate: (string | undefined)[] = [];
    let stoppedAt: number | undefined;
    steps.forEach((step, i) => {
      if (step === 'ok') {
        opening.succeeded();
        fate[i] = 'created';
        return;
      }
      const failure = new ServiceError(`${step} invalid_request_error route_not_found: nope`, { status: step });
      const row = { fail: () => (fate[i] = 'failed'), unsend: () => (fate[i] = 'unsent') };
      if (!opening.failed(failure, row, 'https://gw.example.com')) fate[i] = 'failed by the caller';
      if (stoppedAt === undefined && opening.verdict() !== undefined) {
        stoppedAt = i + 1;
        opening.release();
      }
    });
    const atEnd = end ? opening.verdict(true) : undefined;
    if (end) opening.release();
    return { fate, stoppedAt, atEnd };
  };
  const times = <T,>(n: number, step: T): T[] => Array.from({ length: n }, () => step);

  it('20 answers of 404 stop at the 20th: every one of them unsent, and the ones after too', () => {
    const { fate, stoppedAt } = run(times(25, 404));
    expect(stoppedAt).toBe(SYSTEMIC_STREAK);
    expect(fate).toEqual(times(25, 'unsent'));
  });

  it('404 and 405 mixed count alike', () => {
    expect(run([...times(10, 404), ...times(10, 405)]).stoppedAt).toBe(20);
  });

  it('a success first: later 404s fail as any row would', () => {
    const { fate, stoppedAt } = run(['ok', ...times(25, 404)]);
    expect(stoppedAt).toBeUndefined();
    expect(fate.slice(1)).toEqual(times(25, 'failed by the caller'));
  });

  it('19 held, then a success: the 19 fail, nothing stops', () => {
    const { fate, stoppedAt } = run([...times(19, 404), 'ok', 404]);
    expect(stoppedAt).toBeUndefined();
    expect(fate).toEqual([...times(19, 'failed'), 'created', 'failed by the caller']);
  });

  it('another failure (422) ends the watch too: the rows held fail, it is failed by the caller', () => {
    const { fate } = run([404, 404, 422, 404]);
    expect(fate).toEqual(['failed', 'failed', 'failed by the caller', 'failed by the caller']);
  });

  it('a short run of 404s only: the verdict at the end, with the count and the base URL', () => {
    const { fate, atEnd } = run(times(3, 404), true);
    expect(atEnd).toMatchObject({ count: 3, status: 404, baseUrl: 'https://gw.example.com' });
    expect(fate).toEqual(times(3, 'unsent'));
  });

  it('no answers: no verdict', () => {
    expect(run([], true).atEnd).toBeUndefined();
  });
});
