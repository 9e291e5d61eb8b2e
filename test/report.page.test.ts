/**
 * The review page (--report) as a file: self-contained (a Content-Security-Policy that allows
 * only its own style and script, by hash; no URL anywhere), every value escaped and isolated,
 * counts as the run's --json summary says, problems grouped and bounded, written whole (0600,
 * no temp left). The import's page: service errors with request ids, the resume command. The
 * browser's view of the same pages: report.browser.test.ts.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIELDS } from '../src/import/fields.js';
import { ReportNotes } from '../src/report/collect.js';
import { esc } from '../src/report/html.js';
import { classifyIssue, fixOf, suggestionIn } from '../src/report/problems.js';
import { Timeline } from '../src/report/timeline.js';
import { shellQuote } from '../src/cli/resume-command.js';
import { cli } from './cli-in-process.js';
import { expectNoneOf, readResults, ROOT, useSandbox } from './helpers.js';
import { BULK_INVALID, HOSTILE, HOSTILE_COUNTS, hostileCsv, pageCounts } from './report.helpers.js';

// Its dates are refused by name (400 parameter_unknown, param application_date): rows the service fails.
const ctx = useSandbox({ applicationDateField: 'submitted_on' });

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The tbody of the table under a problem group's heading. */
function groupRows(html: string, id: string): number {
  const start = html.indexOf(`id="${id}"`);
  const end = html.indexOf('</section>', start);
  expect(start).toBeGreaterThan(0);
  return html.slice(start, end).match(/<tr>/g)!.length - 1;
}

describe('validate --report', () => {
  it('writes one self-contained page: hostile values as text, counts as --json says, groups bounded', async () => {
    const input = join(ctx.dir, 'hostile.csv');
    const report = join(ctx.dir, 'review.html');
    await writeFile(input, hostileCsv());
    const run = await cli(['validate', input, '--report', report, '--json', '--quiet']);
    expect(run.code).toBe(1);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts).toMatchObject(HOSTILE_COUNTS);
    expect(summary.report).toBe(report);
    const html = await readFile(report, 'utf8');

    // Nothing from elsewhere: no URL-bearing attribute at all, and a policy that forbids loads.
    const tags = html.match(/<[a-zA-Z][^>]*>/g)!;
    expect(tags.filter((tag) => /\s(src|href|srcset|action|background)=/i.test(tag))).toEqual([]);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)![1]!.replaceAll('&#39;', "'");
    expect(csp).toMatch(/^default-src 'none'; /);
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    expect(csp).toContain(`script-src ${sha256(script)}`);
    expect(csp).toContain(`style-src ${sha256(style)}`);

    // Values are data: one script element (the page's own), no image, each value escaped in a <bdi>.
    expect(html.match(/<script/gi)).toHaveLength(1);
    expect(html.match(/<\/script/gi)).toHaveLength(1);
    expect(html).not.toMatch(/<img|<b>/i);
    expect(html).toContain('<bdi class="sample">&lt;img src=x onerror=alert(1)&gt;</bdi>');
    expect(html).toContain('<mark><bdi>&lt;img src=x onerror=alert(3)&gt;</bdi></mark>');
    expect(html).toContain('<bdi class="sample">&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;&lt;script&gt;alert(2)&lt;/script&gt;</bdi>');
    expect(html).toContain(`<bdi>${HOSTILE.rloName}</bdi>`);
    expect(html).toContain(`<bdi class="sample">${HOSTILE.rloName}</bdi>`);
    expect(html).not.toMatch(new RegExp(`[^>]${HOSTILE.rloName}`));

    const { valid, invalid, duplicate } = summary.counts;
    expect(pageCounts(html)).toEqual({ rows: summary.rows, valid, invalid, duplicate });
    // The first 200 values of a kind, then a count; the suggestion beside the marked value, not applied.
    expect(groupRows(html, 'problem-email_not_an_address')).toBe(200);
    expect(html).toContain(`<code>email_not_an_address</code> in column <bdi>email</bdi> — ${BULK_INVALID + 1} rows, 200+ values</h3>`);
    expect(html).toContain('and 6 more rows with other values');
    // Who each row is: its name and e-mail, escaped, and its other cells on demand.
    expect(html).toMatch(/<mark><bdi>not-an-email-7<\/bdi><\/mark><\/td><td><span data-v="1">×1<\/span><\/td><td><bdi class="name">Client 7<\/bdi> · <bdi class="email">not-an-email-7<\/bdi><details><summary>the row&#39;s values<\/summary><dl class="cells"><dt><bdi>name<\/bdi><\/dt><dd><bdi>Client 7<\/bdi><\/dd>/);
    expect(html).toMatch(/<mark><bdi>&lt;img src=x onerror=alert\(3\)&gt;<\/bdi><\/mark><\/td><td><span data-v="1">×1<\/span><\/td><td><bdi class="name">Ann<\/bdi> · <bdi class="email">ann@example.com<\/bdi>/);
    expect(html).toContain('<bdi class="name">Cy</bdi> · <bdi class="email">&lt;/script&gt;</bdi>');
    expect(html).toContain('<mark><bdi>&lt;/script&gt;</bdi></mark>');
    expect(html).toMatch(/<mark><bdi>Germny<\/bdi><\/mark>.*<td><bdi>Germany \(DE\)<\/bdi><\/td>/);
    expect(html).toContain('<bdi>bob@gmail.com</bdi>');
    // Rows named by the file's line, as the person fixing it sees it (the header is line 1).
    expect(html).toMatch(/id="duplicates".*data-v="3".*<td>4<\/td>/s);
    expect(html).toMatch(/Ignored columns \(not sent\): <bdi>Notes<\/bdi>/);
    expect(html).toMatch(/<code>country<\/code><\/td><td><bdi>France<\/bdi><\/td><td><bdi>FR<\/bdi><\/td><td><span data-v="2">/);

    // Written whole and private: no temp file beside it.
    expect((await stat(report)).mode & 0o777).toBe(0o600);
    expect((await readdir(ctx.dir)).filter((name) => name.includes('review.html'))).toEqual(['review.html']);
  });

  it('lists a value once: "Germny" ×1,219 with its first lines, who they are and the suggestion; other values after it', async () => {
    const input = join(ctx.dir, 'germny.csv');
    const report = join(ctx.dir, 'germny.html');
    const rows = Array.from({ length: 1219 }, (_, n) => `Kunde ${n},kunde${n}@example.com,Germny,Weg ${n}`);
    rows.splice(3, 0, 'Ana,ana@example.com,Atlantis,Via 1');
    await writeFile(input, `name,email,country,address\n${rows.join('\n')}\n`);
    const run = await cli(['validate', input, '--report', report, '--quiet']);
    expect(run.code).toBe(1);
    const html = await readFile(report, 'utf8');
    expect(html).toContain('<code>country_unknown</code> in column <bdi>country</bdi> — 1,220 rows, 2 values</h3>');
    expect(groupRows(html, 'problem-country_unknown')).toBe(2);
    const lines = [2, 3, 4, ...Array.from({ length: 17 }, (_, i) => i + 6)];
    const first = `<span data-v="2">2</span>${lines.slice(1).map((line) => `, ${line}`).join('')}, …`;
    expect(html).toContain(`<tr><td>${first}</td><td><mark><bdi>Germny</bdi></mark></td><td><span data-v="1219">×1,219</span></td><td><bdi class="name">Kunde 0</bdi> · <bdi class="email">kunde0@example.com</bdi><details><summary>1,218 more, and line 2&#39;s values</summary><ul class="people"><li>Line 3: <bdi class="name">Kunde 1</bdi>`);
    expect(html).toContain('<li class="muted">and 1,214 more</li>');
    expect(html).toMatch(/×1,219.*did you mean Germany \(DE\)\?\)<\/bdi><\/td><td><bdi>Germany \(DE\)<\/bdi><\/td><\/tr>\n<tr><td><span data-v="5">5<\/span><\/td><td><mark><bdi>Atlantis<\/bdi>/);
    // 1,219 rows, one line of the page: not 200 identical lines.
    expect(html.match(/<bdi>Germny<\/bdi><\/mark>/g)).toHaveLength(1);
  });

  it.each([
    ['fix-it/fix-me.xlsx', 1, ['<dt>Format</dt><dd>xlsx spreadsheet</dd>', '<dt>Sheet</dt><dd><bdi>fix me</bdi></dd>', '<dt>Header row</dt><dd>row 1 (the first)</dd>']],
    [
      'input/excel-semicolon-cp1252-crlf-sep.csv',
      0,
      ['<dt>Encoding</dt><dd>windows-1252 [detected: no UTF-8 sequences]</dd>', '<code><bdi>&quot;;&quot;</bdi></code> <span class="muted">(sep-line)</span>', '<dt>Header row</dt><dd>line 2'],
    ],
  ])('says how %s was read', async (fixture, exitCode, facts) => {
    const report = join(ctx.dir, `${fixture.replace(/\W/g, '-')}.html`);
    const run = await cli(['validate', join(ROOT, 'fixtures', fixture), '--report', report, '--results', `${report}.results.csv`, '--quiet']);
    expect(run.code).toBe(exitCode);
    const html = await readFile(report, 'utf8');
    for (const fact of facts) expect(html).toContain(fact);
  });

  it('refuses a page path that is the input (exit 2, same_file), before reading a row', async () => {
    const input = join(ctx.dir, 'same.csv');
    await writeFile(input, 'name,email,country,address\nAna,ana@example.com,IT,Via 1\n');
    const run = await cli(['validate', input, '--report', input]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--report .*same\.csv is the same file as the input.*\[same_file\]/);
    expect(await readFile(input, 'utf8')).toContain('Ana');
  });
});

describe('import --report', () => {
  it('groups the service errors by code with their request ids, and shows the command that continues', async () => {
    const input = join(ctx.dir, 'dated.csv');
    const report = join(ctx.dir, 'run.html');
    const rows = [1, 2, 3].map((n) => `Dated ${n},dated${n}@example.com,DE,Street ${n},2024-05-0${n}`);
    await writeFile(input, `name,email,country,address,application_date\n${rows.join('\n')}\n`);
    const run = await cli(['import', input, '--report', report, '--max-errors', '2', '--concurrency', '1', '--json', '--quiet'], ctx.env());
    expect(run.code).toBe(3);
    const summary = JSON.parse(run.stdout);
    const html = await readFile(report, 'utf8');
    expect(pageCounts(html)).toEqual({ rows: 3, ...Object.fromEntries(['created', 'existing', 'failed', 'invalid', 'duplicate', 'skipped', 'not_attempted'].map((k) => [k, summary.counts[k]])) });
    expect(summary.counts).toMatchObject({ failed: 2, not_attempted: 1 });

    const failed = (await readResults(`${input}.results.csv`)).filter((line) => line[1] === 'failed');
    const requestIds = failed.map((line) => line[10]!);
    expect(requestIds.every((id) => id.length > 0)).toBe(true);
    expect(html).toMatch(/id="service-parameter_unknown"><h3><code>parameter_unknown<\/code> — 2 rows/);
    for (const id of requestIds) expect(html).toContain(`<code><bdi>${id}</bdi></code>`);
    // Rows are signed in parallel: which two reach the wire first varies. Each failed row's date is marked.
    for (const line of failed) expect(html).toContain(`<mark><bdi>2024-05-0${line[0]}</bdi></mark>`);
    expect(html).toMatch(/id="stopped".*<code>max_errors<\/code>/s);
    // As typed, paths quoted as a shell needs them (a TMPDIR may hold a space), then escaped for HTML.
    const resume = `ccs-bulk import ${shellQuote(input)} --report ${shellQuote(report)} --max-errors 2 --concurrency 1 --json --quiet --resume`;
    expect(html).toContain(`<pre class="command"><code>${esc(resume)}</code></pre>`);
    // The token (from the environment) and the signing key stay out of the page.
    expectNoneOf(html, [ctx.sandbox.token]);
    expect(html).toContain('id="chart"');
  });
});

describe('import --report through an outage', () => {
  it('charts the run second by second, the seconds the service was down shaded', async () => {
    const input = join(ctx.dir, 'outage.csv');
    const report = join(ctx.dir, 'outage.html');
    const rows = Array.from({ length: 300 }, (_, n) => `Outage ${n},outage${n}@example.com,DE,Street ${n}`);
    await writeFile(input, `name,email,country,address\n${rows.join('\n')}\n`);
    // 10 ms a request keeps the rows busy past the outage's start.
    ctx.sandbox.setFaults({ latencyMs: 10, outage: { atMs: 300, forMs: 2500, kind: '503' } });
    try {
      const run = await cli(['import', input, '--report', report, '--concurrency', '4', '--json', '--quiet'], ctx.env());
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).counts).toMatchObject({ created: 300, failed: 0 });
    } finally {
      ctx.sandbox.setFaults({ latencyMs: 0, outage: undefined });
    }
    const html = await readFile(report, 'utf8');
    expect(html.match(/<polyline class="(rate|flight)" points="[\d., ]+"\/>/g)).toHaveLength(2);
    expect(html).toMatch(/<rect class="pause" x="[\d.]+" y="\d+" width="[\d.]+"/);
    expect(pageCounts(html)).toMatchObject({ rows: 300, created: 300, failed: 0 });
  }, 150_000);
});

describe('what the page keeps is bounded', () => {
  it('100,000 invalid rows keep 200 per kind; a day of chart points keeps under 1,200', () => {
    const notes = new ReportNotes({
      source: { file: 'f.csv', format: 'csv', encoding: 'utf-8', encodingSource: 'default', delimiter: ',', delimiterSource: 'default', header: { line: 1, skipped: [], source: 'first' }, sizeBytes: 1 },
      headers: ['name', 'email', 'country', 'address'],
      columns: { name: 0, email: 1, country: 2, address: 3 },
      map: {},
      unknown: [],
      dryRun: true,
    });
    for (let row = 1; row <= 100_000; row++) {
      notes.row([`n${row}`, 'x', `C${row}`, 'a']);
      notes.invalid(row, [`n${row}`, 'x', `C${row}`, 'a'.repeat(5000)], [`country: unknown country "C${row}" (use …)`, 'email: not an e-mail address ("x")']);
      notes.duplicate(row, ['n', 'e', 'c', 'a'], row % 1000);
    }
    // 100,000 different countries: 200 values kept, the rest counted; one e-mail 100,000 times: one value, its first rows.
    const country = notes.problems.map.get('country_unknown')!;
    expect({ total: country.total, values: country.values.size, unlisted: country.unlisted }).toEqual({ total: 100_000, values: 200, unlisted: 99_800 });
    const email = notes.problems.map.get('email_not_an_address')!;
    expect({ total: email.total, values: email.values.size, unlisted: email.unlisted }).toEqual({ total: 100_000, values: 1, unlisted: 0 });
    const [x] = email.values.values();
    expect(x).toMatchObject({ value: 'x', total: 100_000, lines: Array.from({ length: 20 }, (_, i) => i + 1) });
    expect(x!.people).toEqual([1, 2, 3, 4, 5].map((line) => ({ line, name: `n${line}`, email: 'x' })));
    // The first row's cells, each cut: a 5,000-character address keeps 80.
    expect(x!.cells).toEqual([['name', 'n1'], ['email', 'x'], ['country', 'C1'], ['address', `${'a'.repeat(80)}…`]]);
    expect(notes.duplicates.map.size).toBe(200);
    expect([...notes.duplicates.map.values()].every((group) => group.items.length <= 20)).toBe(true);
    expect(notes.samples[0]).toEqual(['n1', 'n2', 'n3']);
    // Every field wrong in every way in every row: a hundred kinds, and still a bounded page.
    const kinds = ['required, but empty', 'longer than 1000 characters', 'holds a control character (U+0001)', 'holds a spreadsheet error (#N/A)', 'byte 0xE9 is not valid UTF-8', 'unknown country "x"', 'not an ISO 4217 currency code ("x")', 'not a real date in YYYY-MM-DD ("x")', 'not an e-mail address ("x")', 'mistyped domain "x"', 'only "chain" is documented', 'only printable ASCII without spaces', 'something else'];
    const wide = new ReportNotes(notes.plan);
    for (let row = 1; row <= 1000; row++) {
      const issues = FIELDS.flatMap((field) => kinds.map((kind) => `${field}: ${kind} ${row}`));
      wide.invalid(row, [`n${row}`, `e${row}`, `c${row}`, `a${row}`], issues);
    }
    expect(wide.problems.map.size).toBe(FIELDS.length * 12);
    const listed = [...wide.problems.map.values()].reduce((sum, kind) => sum + kind.values.size, 0);
    expect(listed).toBe(4000);
    const timeline = new Timeline();
    for (let second = 1; second <= 86_400; second++) timeline.add(second, second * 10, 4);
    expect(timeline.points.length).toBeLessThan(1200);
    expect(timeline.points.at(-1)).toMatchObject({ at: 86_400, rows: 864_000 });
  });

  it.each([
    ['country: unknown country "Germny" (did you mean Germany (DE)?)', 'country_unknown', 'Germany (DE)', 'an ISO 3166 code (DE, DEU) or the English name (Germany).'],
    ['currency: not an ISO 4217 currency code ("EURO"; did you mean EUR?)', 'currency_unknown', 'EUR', 'a three-letter code such as EUR, USD, GBP.'],
    ['email: mistyped domain "gmial.com" (did you mean ann@gmail.com?)', 'email_mistyped_domain', 'ann@gmail.com', 'use the suggestion if it is what was meant.'],
    ['name: required, but empty', 'name_required', undefined, 'fill in this cell.'],
    ['row has 3 fields but the header has 4', 'row_width', undefined, undefined],
    ['"Notes": byte 0xE9 is not valid UTF-8 (the file is UTF-8 elsewhere; …)', 'column_invalid_bytes', undefined, undefined],
  ])('%j → %s', (issue, code, suggestion, fix) => {
    const problem = classifyIssue(issue);
    expect(problem.code).toBe(code);
    expect(suggestionIn(problem.message)).toBe(suggestion);
    expect(fixOf(problem.message)).toBe(fix);
  });
});
