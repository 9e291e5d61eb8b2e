import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCreateBody } from '../src/sandbox/validate.js';
import { shellQuote } from '../src/cli/resume-command.js';
import { cli } from './cli-in-process.js';
import { readResults, useSandbox } from './helpers.js';

const ctx = useSandbox();

const HEADER = 'name,email,country,address,idempotency_key';
const row = (n: number) => `Client ${n},client${n}@example.com,IT,Via ${n},ext-${n}`;

/**
 * Puts a client on the sandbox as an earlier run would have left it an hour ago: the same key
 * and the same body as the import will send, so the import's request is a replay.
 */
function createdAnHourAgo(n: number): void {
  const body = { name: `Client ${n}`, idempotency_key: `ext-${n}`, email: `client${n}@example.com`, country: 'IT', address: `Via ${n}`, liquidity_type: 'chain' };
  const checked = checkCreateBody('application_date')(Buffer.from(JSON.stringify(body)), 'application/json');
  if (!checked.ok) throw new Error('the test body is not one the sandbox accepts');
  const outcome = ctx.sandbox.store.createIdempotent(body.idempotency_key, checked.fields, () => ({
    name: body.name,
    email: body.email,
    country: body.country,
    address: body.address,
    created_at: new Date(Date.now() - 3_600_000),
  }));
  if (outcome.kind !== 'created') throw new Error(`ext-${n} was on the sandbox already`);
}

describe('summaries that say what happened', () => {
  it('clients the service already held count as existing, not created: matched by e-mail, or replayed under their key', async () => {
    createdAnHourAgo(1);
    createdAnHourAgo(2);
    const input = join(ctx.dir, 'replay.csv');
    await writeFile(input, [HEADER, row(1), row(2), row(3)].join('\n'));
    // Matched by person before sending: `existing` lines with the clients' ids.
    const matched = await cli(['import', input, '--json', '--results', join(ctx.dir, 'matched.csv')], ctx.env());
    expect(matched.code).toBe(0);
    expect(JSON.parse(matched.stdout).counts).toMatchObject({ created: 1, existing: 2 });
    expect(matched.stderr).toMatch(/Imported 3 rows .*: 1 created, 2 existing \(already on the service, not created\), 0 failed/);
    expect((await readResults(join(ctx.dir, 'matched.csv'))).map((l) => l[1])).toEqual(['existing', 'existing', 'created']);

    // Without the e-mail match the key still protects: the requests replay, and the summary says so.
    const run = await cli(['import', input, '--json', '--identity', 'none'], ctx.env());
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts.created).toBe(3);
    expect(summary.replayed).toBe(2);
    expect(run.stderr).toMatch(/Imported 3 rows .*: 1 created, 2 existing \(already on the service, not created\), 0 failed/);
    expect((await readResults(`${input}.results.csv`)).map((l) => l[1])).toEqual(['created', 'created', 'created']);

    // Rows this run created are never `existing`, even replayed at once by the next run's first seconds.
    const fresh = join(ctx.dir, 'fresh.csv');
    await writeFile(fresh, [HEADER, row(4), row(5)].join('\n'));
    const first = JSON.parse((await cli(['import', fresh, '--json', '--quiet'], ctx.env())).stdout);
    expect(first).toMatchObject({ replayed: 0, counts: { created: 2 } });
  });

  it('a stopped run starts with "Stopped after N rows", then one line of cause and one of fix pointing to ccs-bulk check', async () => {
    const input = join(ctx.dir, 'refused.csv');
    await writeFile(input, [HEADER, row(11), row(12), row(13)].join('\n'));
    const run = await cli(['import', input, '--concurrency', '1'], { ...ctx.env(), CCS_TOKEN: 'lk_sandbox_not_this_one' });
    expect(run.code).toBe(3);
    const lines = run.stderr.trimEnd().split('\n');
    const at = lines.findIndex((line) => line.startsWith('Stopped after '));
    // The token is refused at the first request: the listing of who the service holds, before any row.
    expect(lines[at]).toMatch(/^Stopped after 0 of 3 rows in .*: 0 created, 0 failed, 0 invalid, 0 duplicate, 3 not attempted$/);
    expect(lines[at + 1]).toBe('  cause: the service refused the token or the signature (401 api_key_invalid)');
    expect(lines[at + 2]).toMatch(/^ {2}fix: check the token .*: ccs-bulk check tests both/);
    expect(lines.at(-1)).toBe(`  to continue: ccs-bulk import ${shellQuote(input)} --concurrency 1 --resume`);
    // One short line each: the service's text and the token advice are in the results file, not repeated here.
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(160);
    expect(run.stderr).not.toContain('lk_sandbox_not_this_one');
  });
});
