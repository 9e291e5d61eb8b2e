/**
 * A person is one client: rows are matched by their person (the normalized e-mail, or a column
 * the user names) within the file and against the clients the service already holds.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './cli-in-process.js';
import { readResults, sandboxEnv, startTestSandbox, useSandbox } from './helpers.js';

const ctx = useSandbox();

const people = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => {
    const n = from + i;
    return { name: `Person ${n}`, email: `person${n}@example.com`, address: `Street ${n}` };
  });

const csv = (header: string, lines: string[]) => [header, ...lines].join('\n') + '\n';

/** The results lines by outcome: [row, client_id, error_code, error_message]. */
async function outcomes(path: string): Promise<Record<string, string[][]>> {
  const byOutcome: Record<string, string[][]> = {};
  for (const line of await readResults(path)) (byOutcome[line[1]!] ??= []).push([line[0]!, line[2]!, line[7]!, line[9]!]);
  return byOutcome;
}

describe('a person is one client', () => {
  it('the same people imported again with one more column are existing, not a second client (15 clients for 15 people)', async () => {
    const before = ctx.sandbox.store.size;
    const first = join(ctx.dir, 'first.csv');
    await writeFile(first, csv('name,email,country,address', people(1, 10).map((p) => `${p.name},${p.email},DE,${p.address}`)));
    const one = await cli(['import', first, '--json'], ctx.env());
    expect(one.code).toBe(0);
    const created = new Map((await readResults(`${first}.results.csv`)).map((line) => [line[0], line[2]]));

    // The same 10 (4 with their e-mail in other capitals or with spaces around it), all with a
    // currency now; 5 new people, one of them twice (e-mail case changed, address corrected).
    const again = people(1, 10).map((p, i) => {
      const email = i % 3 === 0 ? `  ${p.email.toUpperCase()} ` : p.email;
      return `${p.name},"${email}",DE,${p.address},EUR`;
    });
    const fresh = people(11, 15).map((p) => `${p.name},${p.email},DE,${p.address},EUR`);
    const twice = 'Person 15,PERSON15@EXAMPLE.COM,DE,Street 15a,EUR';
    const second = join(ctx.dir, 'second.csv');
    await writeFile(second, csv('name,email,country,address,currency', [...again, ...fresh, twice]));
    const two = await cli(['import', second, '--json'], ctx.env());
    expect(two.code).toBe(0);
    const summary = JSON.parse(two.stdout);
    expect(summary.counts).toMatchObject({ created: 5, existing: 10, duplicate: 1, failed: 0 });
    expect(ctx.sandbox.store.size - before).toBe(15);

    const lines = await outcomes(`${second}.results.csv`);
    // Each existing row names the client the first import created for that person.
    for (const [row, id] of lines.existing!) expect(id).toBe(created.get(row));
    expect(lines.duplicate).toEqual([
      ['16', '', '', 'repeats line 16\'s e-mail; email differs: "person15@example.com" (line 16) vs "PERSON15@EXAMPLE.COM"; address differs: "Street 15" (line 16) vs "Street 15a"'],
    ]);
    expect(two.stderr).toMatch(/5 created, 10 existing \(already on the service, not created\)/);
  });

  it('within one file, the same person in other capitals, or an internationalized domain in either form, is a duplicate naming the first row', async () => {
    const input = join(ctx.dir, 'within.csv');
    await writeFile(
      input,
      csv('name,email,country,address', [
        'Søren Hofmann,soren.hofmann@hofmann-within.dk,DK,Nørregade 1',
        'SØREN HOFMANN,SOREN.HOFMANN@HOFMANN-WITHIN.DK,DK,Nørregade 1',
        'Jörg Bücher,joerg@bücher-within.de,DE,Hauptstraße 2',
        'Jörg Bücher,JOERG@xn--bcher-within-dlb.de,DE,Hauptstraße 2',
      ]),
    );
    const run = await cli(['validate', input, '--json'], ctx.env());
    expect(run.code).toBe(0);
    const lines = await outcomes(`${input}.results.csv`);
    expect(lines.valid!.map((l) => l[0])).toEqual(['1', '3']);
    expect(lines.duplicate!.map((l) => [l[0], l[3]])).toEqual([
      ['2', 'repeats line 2\'s e-mail; name differs: "Søren Hofmann" (line 2) vs "SØREN HOFMANN"; email differs: "soren.hofmann@hofmann-within.dk" (line 2) vs "SOREN.HOFMANN@HOFMANN-WITHIN.DK"'],
      // The domain is checked and sent in its ASCII form: the two rows are one body, one key.
      ['4', 'same idempotency key as line 4'],
    ]);
  });

  it('a client the service held before the run (its seed) is existing with its id; one e-mail held twice is reported, not guessed at', async () => {
    const seeded = ctx.sandbox.store.insert({ email: 'Held.Before@Example.com', name: 'Held Before' });
    const a = ctx.sandbox.store.insert({ email: 'shared@twice.example', name: 'Shared A' });
    const b = ctx.sandbox.store.insert({ email: 'SHARED@twice.example', name: 'Shared B' });
    const input = join(ctx.dir, 'held.csv');
    await writeFile(
      input,
      csv('name,email,country,address', ['Held Before,held.before@example.com,IT,Via 1', 'Shared,shared@twice.example,IT,Via 2', 'New One,new.one@held.example,IT,Via 3']),
    );
    const run = await cli(['import', input, '--json'], ctx.env());
    expect(run.code).toBe(0);
    const lines = await outcomes(`${input}.results.csv`);
    expect(lines.existing!.map((line) => line.slice(0, 3))).toEqual([
      ['1', seeded.id, ''],
      ['2', '', 'held_several'],
    ]);
    const [first, second] = [a.id, b.id].sort();
    expect(lines.existing![1]![3]).toBe(`the service holds this person as 2 clients (${first}, ${second}): not created again; choose which one is theirs`);
    expect(lines.created!.map((l) => l[0])).toEqual(['3']);
  });

  it('validate --check-service shows who is already there before anything is sent', async () => {
    ctx.sandbox.store.insert({ email: 'already@check.example', name: 'Already There' });
    const input = join(ctx.dir, 'check.csv');
    await writeFile(input, csv('name,email,country,address', ['Already There,already@check.example,FR,Rue 1', 'Not Yet,not.yet@check.example,FR,Rue 2']));
    const size = ctx.sandbox.store.size;
    const run = await cli(['validate', input, '--check-service', '--json'], ctx.env());
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ valid: 1, existing: 1 });
    expect(ctx.sandbox.store.size).toBe(size);
    // Offline, as validate always was: nothing is asked.
    const offline = await cli(['validate', input, '--json', '--results', join(ctx.dir, 'offline.csv')], { PATH: process.env.PATH ?? '' });
    expect(JSON.parse(offline.stdout).counts).toMatchObject({ valid: 2, existing: 0 });
  });

  it('--identity none lets two companies share accounting@; --identity column:Kundennr. matches by customer number', async () => {
    ctx.sandbox.store.insert({ email: 'accounting@shared-office.example', name: 'Alpha GmbH' });
    const input = join(ctx.dir, 'shared.csv');
    await writeFile(
      input,
      csv('Kundennr.,name,email,country,address', [
        'K-1,Beta GmbH,accounting@shared-office.example,DE,Hof 1',
        'K-2,Gamma GmbH,accounting@shared-office.example,DE,Hof 1',
        'K-2,Gamma GmbH (new name),accounting@shared-office.example,DE,Hof 1',
      ]),
    );
    const byEmail = await cli(['validate', input, '--check-service', '--json', '--results', join(ctx.dir, 'by-email.csv')], ctx.env());
    expect(JSON.parse(byEmail.stdout).counts).toMatchObject({ existing: 1, duplicate: 2 });

    const byColumn = await cli(['import', input, '--identity', 'column:Kundennr.', '--json'], ctx.env());
    expect(byColumn.code).toBe(0);
    const lines = await outcomes(`${input}.results.csv`);
    expect(lines.created!.map((l) => l[0])).toEqual(['1', '2']);
    expect(lines.duplicate!.map((l) => [l[0], l[3]])).toEqual([['3', 'repeats line 3\'s Kundennr.; name differs: "Gamma GmbH" (line 3) vs "Gamma GmbH (new name)"']]);

    const none = join(ctx.dir, 'none.csv');
    await writeFile(none, csv('name,email,country,address', ['Delta GmbH,accounting@shared-office.example,DE,Hof 2']));
    const off = await cli(['import', none, '--identity', 'none', '--json'], ctx.env());
    expect(JSON.parse(off.stdout).counts).toMatchObject({ created: 1, existing: 0 });
  });

  it('a repeat run lists only the clients created since the last one; the held file holds no e-mail', async () => {
    const sandbox = await startTestSandbox();
    try {
      const env = sandboxEnv(sandbox, ctx.keyFile);
      const hourAgo = Date.now() - 3_600_000;
      // Created a minute apart, the newest an hour ago.
      for (let i = 0; i < 250; i++) sandbox.store.insert({ email: `old${i}@repeat.example`, created_at: new Date(hourAgo - i * 60_000) });
      const cache = join(ctx.dir, 'held.txt');
      const input = join(ctx.dir, 'repeat.csv');
      await writeFile(input, csv('name,email,country,address', ['Repeat One,repeat.one@example.com,ES,Calle 1']));
      const first = JSON.parse((await cli(['import', input, '--held-cache', cache, '--json'], env)).stdout);
      expect(first.matching).toMatchObject({ fromCache: 0, listed: 250, known: 250 });

      const next = join(ctx.dir, 'repeat-2.csv');
      await writeFile(next, csv('name,email,country,address', ['Repeat One,REPEAT.ONE@example.com,ES,Calle 1', 'Old Three,Old3@Repeat.Example,ES,Calle 3']));
      const second = JSON.parse((await cli(['import', next, '--held-cache', cache, '--json'], env)).stdout);
      expect(second.counts).toMatchObject({ existing: 2, created: 0 });
      // From a minute before the newest client the first run saw: that one, the one a minute
      // older (the bound is inclusive), and the client the first run created; one request.
      expect(second.matching).toMatchObject({ fromCache: 250, listed: 3, known: 251, requests: 1 });
      const text = await readFile(cache, 'utf8');
      expect(text).not.toMatch(/@/);
      expect((await stat(cache)).mode & 0o777).toBe(0o600);
      expect(text.split('\n')[0]).toContain(sandbox.url);
    } finally {
      await sandbox.close();
    }
  });

  it('--resume: rows created by the earlier run are its own (skipped, not existing); a row edited since is said, not sent again', async () => {
    const input = join(ctx.dir, 'resumed.csv');
    const rows = ['Resumed One,resumed.one@example.com,AT,Gasse 1', 'Resumed Two,resumed.two@example.com,AT,Gasse 2', 'Resumed Three,resumed.three@example.com,AT,Gasse 3'];
    await writeFile(input, csv('name,email,country,address', rows));
    expect((await cli(['import', input, '--json'], ctx.env())).code).toBe(0);
    const ids = new Map((await readResults(`${input}.results.csv`)).map((line) => [line[0], line[2]]));
    const size = ctx.sandbox.store.size;

    // Row 2's address corrected after the run: a new key, the same person.
    await writeFile(input, csv('name,email,country,address', [rows[0]!, 'Resumed Two,resumed.two@example.com,AT,Gasse 2a', rows[2]!]));
    // A created row edited since: refused until the user says go on (import.source-changed.test.ts).
    expect((await cli(['import', input, '--resume'], ctx.env())).code).toBe(2);
    const run = await cli(['import', input, '--resume', '--accept-changed-source', '--json'], ctx.env());
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts).toMatchObject({ created: 0, existing: 0, skipped: 3 });
    expect(summary.changedRows).toEqual([2]);
    expect(ctx.sandbox.store.size).toBe(size);
    const lines = await outcomes(`${input}.results.csv`);
    expect(lines.skipped).toEqual([
      ['2', ids.get('2'), 'changed_since_created', `changed since an earlier run of this results file created client ${ids.get('2')} from it: not sent again (the service has no update)`],
    ]);
    expect(run.stderr).toMatch(/row 2 changed since .*created its client/);
  });

  it('a held file made for another service is refused by name, and nothing is sent', async () => {
    const cache = join(ctx.dir, 'other-service.txt');
    await writeFile(cache, `${JSON.stringify({ held_emails: 1, service: 'https://elsewhere.example', account: null })}\n`, { mode: 0o600 });
    const input = join(ctx.dir, 'refused-cache.csv');
    await writeFile(input, csv('name,email,country,address', ['Never Sent,never.sent@example.com,PT,Rua 1']));
    const size = ctx.sandbox.store.size;
    const run = await cli(['import', input, '--held-cache', cache], ctx.env());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`held e-mails file ${cache}: it was made for another service (https://elsewhere.example)`);
    expect(run.stderr).toContain('--held-cache');
    expect(ctx.sandbox.store.size).toBe(size);
    await expect(readFile(`${input}.results.csv`)).rejects.toThrow(/ENOENT/);
  });
});

/** A service of our own on loopback whose List Clients answers `list` (and never creates). */
async function listingServer(list: (res: ServerResponse) => void): Promise<{ url: string; posts: () => number; close(): Promise<void> }> {
  let posts = 0;
  const server = createServer((req, res) => {
    req.resume();
    if (req.method === 'POST') {
      posts++;
      res.writeHead(500).end();
    } else list(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts: () => posts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('a service whose clients cannot be matched', () => {
  const answers: [string, (res: ServerResponse) => void, RegExp][] = [
    [
      'lists clients without e-mails',
      (res) => {
        const clients = [{ id: 'c-1', name: 'No Mail', created_at: '2026-01-01T00:00:00Z' }];
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', timestamp: '', data: { page: 0, size: 100, clients } }));
      },
      /List Clients answered a client without an e-mail \(c-1\)/,
    ],
    [
      'refuses the listing',
      (res) => {
        const error = { type: 'authorization_error', code: 'forbidden_operation', message: 'listing is not allowed for this key' };
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
      },
      /List Clients was refused \(.*listing is not allowed for this key.*\)/,
    ],
  ];
  it.each(answers)('one that %s stops the run before sending, naming --identity none', async (_, list, said) => {
    const server = await listingServer(list);
    try {
      const input = join(ctx.dir, `unmatchable-${server.url.split(':').at(-1)}.csv`);
      await writeFile(input, csv('name,email,country,address', ['Kept Back,kept.back@example.com,NL,Straat 1']));
      const run = await cli(['import', input, '--held-cache', 'none'], { ...ctx.env(), CCS_BASE_URL: server.url });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(said);
      expect(run.stderr).toContain('nothing was sent; --identity none imports without the e-mail match');
      expect(server.posts()).toBe(0);
    } finally {
      await server.close();
    }
  });
});
