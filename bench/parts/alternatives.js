/**
 * Part 6: what users would run instead, over the same rows: `xargs -P16 curl` and a
 * sequential fetch script (both unsigned, against a sandbox with signature checks off),
 * newman (opt-in: --with-alternatives, and only if `npx --no-install newman` already works:
 * it is not a dependency), vs ccs-bulk import with signing against a verifying sandbox.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runMeasured } from '../lib/processes.js';
import { count, perSecond, row } from '../lib/report.js';
import { bodies } from '../lib/make-inputs.js';
import { importRun } from '../lib/measure-imports.js';
import { child, childEnv, lastJson, runNode, tempPath, timeoutFor, withSandbox } from '../lib/run-child.js';

export const name = 'alternatives';
const PARALLEL = 16;

/** Runs `measure(service)` against a fresh sandbox that does not check signatures. */
const unsigned = (ctx, measure) => withSandbox(ctx, { verifySignatures: false }, measure);

async function xargsCurl(ctx, rows, bodiesFile) {
  const dir = tempPath(ctx, 'curl-bodies');
  mkdirSync(dir);
  const lines = readFileSync(bodiesFile, 'utf8').split('\n').slice(0, rows);
  const list = lines.map((body, i) => {
    const file = join(dir, `${i}.json`);
    writeFileSync(file, body);
    return file;
  });
  const listFile = join(dir, 'list.txt');
  writeFileSync(listFile, `${list.join('\n')}\n`);
  return unsigned(ctx, async (service) => {
    ctx.log(`  xargs -P${PARALLEL} curl, ${rows} rows (unsigned)…`);
    // The token shows in ps here: a sandbox token, and what users of this approach do.
    const args = ['-P', String(PARALLEL), '-I', '{}', 'curl', '-s', '-o', '/dev/null', '-w', '%{http_code}\\n'];
    args.push('-X', 'POST', '-H', 'content-type: application/json');
    args.push('-H', `authorization: Bearer ${service.token}`, '--data-binary', '@{}', `${service.url}/v1/client`);
    const result = await runMeasured('xargs', args, {
      env: childEnv(),
      timeoutMs: timeoutFor(rows, 20),
      stdinFile: listFile,
      statsFile: tempPath(ctx, 'time.txt'),
    });
    const created = result.stdout.split('\n').filter((code) => code === '200').length;
    if (created !== rows) throw new Error(`xargs curl: ${created} of ${rows} created`);
    // GNU time sees xargs only, not the curls: other people's load cannot be told apart here.
    return {
      result: { ...result, cpuS: undefined },
      summary: { rows, rowsPerSecond: rows / result.wallS, wallS: result.wallS },
    };
  });
}

async function fetchLoop(ctx, rows, bodiesFile) {
  return unsigned(ctx, async (service) => {
    ctx.log(`  sequential fetch script, ${rows} rows (unsigned)…`);
    const options = { url: service.url, token: service.token, bodiesFile, rows, timeoutMs: timeoutFor(rows, 20) };
    const result = await runNode(ctx, child('fetch-sequential'), [JSON.stringify(options)], {
      timeoutMs: options.timeoutMs + 10_000,
      label: 'fetch script',
    });
    const summary = lastJson(result.stdout, 'fetch script');
    if (summary.statuses['200'] !== rows) throw new Error(`fetch script: ${JSON.stringify(summary.statuses)}`);
    return { result, summary };
  });
}

async function newmanAvailable() {
  try {
    const result = await runMeasured('npx', ['--no-install', 'newman', '--version'], { timeoutMs: 30_000 });
    return result.code === 0;
  } catch {
    return false;
  }
}

async function newman(ctx, rows, bodiesFile) {
  const dir = tempPath(ctx, 'newman');
  mkdirSync(dir);
  const lines = readFileSync(bodiesFile, 'utf8').split('\n').slice(0, rows);
  const data = join(dir, 'data.csv');
  writeFileSync(data, `body\n${lines.map((body) => `"${body.replaceAll('"', '""')}"`).join('\n')}\n`);
  const collection = join(dir, 'collection.json');
  writeFileSync(
    collection,
    JSON.stringify({
      info: { name: 'ccs-bench', schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' },
      item: [
        {
          name: 'Create Client',
          request: {
            method: 'POST',
            header: [
              { key: 'content-type', value: 'application/json' },
              { key: 'authorization', value: 'Bearer {{token}}' },
            ],
            body: { mode: 'raw', raw: '{{body}}' },
            url: '{{url}}/v1/client',
          },
          event: [
            {
              listen: 'test',
              script: { exec: ['pm.test("created", () => pm.response.to.have.status(200));'] },
            },
          ],
        },
      ],
    }),
  );
  const report = join(dir, 'report.json');
  return unsigned(ctx, async (service) => {
    ctx.log(`  newman, ${rows} iterations (unsigned)…`);
    const args = ['--no-install', 'newman', 'run', collection, '-d', data, '--env-var', `url=${service.url}`];
    args.push('--env-var', `token=${service.token}`, '-r', 'json', '--reporter-json-export', report);
    const result = await runMeasured('npx', args, {
      env: childEnv(),
      timeoutMs: timeoutFor(rows, 10),
      statsFile: tempPath(ctx, 'time.txt'),
    });
    const stats = JSON.parse(readFileSync(report, 'utf8')).run.stats;
    const created = stats.assertions.total - stats.assertions.failed;
    if (created !== rows) throw new Error(`newman: ${created} of ${rows} created`);
    return { result, summary: { rows, rowsPerSecond: rows / result.wallS, wallS: result.wallS } };
  });
}

export async function run(ctx) {
  const rows = ctx.sizes.alternativeRows;
  const bodiesFile = await bodies(ctx, Math.max(rows, ctx.sizes.importRows));
  const curl = await xargsCurl(ctx, rows, bodiesFile);
  const fetched = await fetchLoop(ctx, rows, bodiesFile);
  const withNewman = ctx.withAlternatives && (await newmanAvailable());
  const postman = withNewman ? await newman(ctx, rows, bodiesFile) : undefined;
  const ours = await importRun(ctx, { rows, concurrency: ctx.concurrency });
  const part = '6 vs alternatives';
  const measure = `ccs-bulk import (signed, C=${ctx.concurrency}), ${count(rows)} rows`;
  const versus = (alternative, label) =>
    row({
      part,
      measure,
      figure: perSecond(ours.rowsPerSecond),
      baseline: `${perSecond(alternative.rowsPerSecond)} (${label}, unsigned)`,
      ratio: ours.rowsPerSecond / alternative.rowsPerSecond,
      target: '> 1 (faster)',
      pass: ours.rowsPerSecond > alternative.rowsPerSecond,
      runs: [ours, alternative],
      data: { ours, alternative },
    });
  return [
    versus(curl, `xargs -P${PARALLEL} curl`),
    postman
      ? versus(postman, 'newman CSV iterations')
      : row({
          part,
          measure: 'newman CSV iterations',
          figure: 'skipped',
          baseline: ctx.withAlternatives
            ? 'newman not installed (npx --no-install newman failed)'
            : 'opt-in: --with-alternatives (newman is not a dependency)',
        }),
    row({
      part,
      measure: 'sequential fetch script (unsigned, no retries, no results)',
      figure: perSecond(fetched.rowsPerSecond),
      baseline: `${perSecond(ours.rowsPerSecond)} (ccs-bulk, signed)`,
      ratio: fetched.rowsPerSecond / ours.rowsPerSecond,
      runs: [fetched],
      data: fetched,
    }),
  ];
}
