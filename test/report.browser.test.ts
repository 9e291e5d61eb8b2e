/**
 * The review page in a real browser: headless Chromium (Debian's `chromium`, which .ci/run
 * installs) driven by puppeteer-core. The page loads from disk with no console error (a CSP
 * violation is one) and no request but itself; its counts are the run's --json summary; the
 * hostile values are text; a right-to-left override stays inside its value; headers sort;
 * it reads with JavaScript off; and the import's chart draws. One browser for the file.
 */
import { existsSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportNotes } from '../src/report/collect.js';
import { renderReport, writeReport } from '../src/report/write-report.js';
import { cli } from './cli-in-process.js';
import { makeTempDir } from './helpers.js';
import { HOSTILE, hostileCsv } from './report.helpers.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const found = existsSync(CHROMIUM);

interface Loaded {
  page: Page;
  /** Console errors and uncaught exceptions. */
  errors: string[];
  /** Every request the page made. */
  requests: string[];
}

describe.skipIf(!found)(found ? 'the review page in Chromium' : `the review page in Chromium: SKIPPED, no browser at ${CHROMIUM} (apt-get install chromium)`, () => {
  let browser: Browser;
  let temp: Awaited<ReturnType<typeof makeTempDir>>;
  let summary: { rows: number; counts: Record<string, number> };
  let reportUrl: string;

  beforeAll(async () => {
    temp = await makeTempDir();
    const input = join(temp.dir, 'hostile.csv');
    const report = join(temp.dir, 'review.html');
    await writeFile(input, hostileCsv());
    const run = await cli(['validate', input, '--report', report, '--json', '--quiet']);
    expect(run.code).toBe(1);
    summary = JSON.parse(run.stdout);
    reportUrl = pathToFileURL(report).href;
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      // CI runs as root, where Chromium's sandbox cannot start.
      args: ['--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
      protocolTimeout: 120_000,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await temp?.cleanup();
  });

  /** Opens a page, letting through only the file itself and data: URLs, and records the rest. */
  async function load(url: string, javaScript = true): Promise<Loaded> {
    const page = await browser.newPage();
    const loaded: Loaded = { page, errors: [], requests: [] };
    await page.setJavaScriptEnabled(javaScript);
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      loaded.requests.push(request.url());
      const own = request.url() === url || request.url().startsWith('data:');
      void (own ? request.continue() : request.abort());
    });
    page.on('console', (message) => {
      if (message.type() === 'error') loaded.errors.push(message.text());
    });
    page.on('pageerror', (error) => loaded.errors.push(String(error)));
    await page.goto(url, { waitUntil: 'load' });
    return loaded;
  }

  it('loads with no console error and no request beyond the file; its counts are the --json summary', async () => {
    const { page, errors, requests } = await load(reportUrl);
    expect(errors).toEqual([]);
    expect(requests).toEqual([reportUrl]);
    const counts = await page.evaluate(`Object.fromEntries([...document.querySelectorAll('[data-count]')].map((e) => [e.dataset.count, Number(e.textContent.replaceAll(',', ''))]))`);
    const { valid, invalid, duplicate } = summary.counts;
    expect(counts).toEqual({ rows: summary.rows, valid, invalid, duplicate });
    const shot = join(temp.dir, 'review.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect((await stat(shot)).size).toBeGreaterThan(10_000);
    await page.close();
  });

  it('shows hostile values as text: no element made from them, each value its own text', async () => {
    const { page } = await load(reportUrl);
    const seen = (await page.evaluate(`[...document.querySelectorAll('bdi')].map((e) => e.textContent)`)) as string[];
    for (const value of Object.values(HOSTILE)) expect(seen).toContain(value);
    const elements = await page.evaluate(`({
      images: document.images.length,
      scripts: document.scripts.length,
      bold: document.querySelectorAll('b').length,
      bdiChildren: [...document.querySelectorAll('bdi')].filter((e) => e.children.length > 0).length,
    })`);
    expect(elements).toEqual({ images: 0, scripts: 1, bold: 0, bdiChildren: 0 });
    await page.close();
  });

  it('keeps a right-to-left override inside its value: the sample after it is still to its right', async () => {
    const { page } = await load(reportUrl);
    const places = (await page.evaluate(`(() => {
      const cell = [...document.querySelectorAll('#mapping tbody tr')].find((row) => row.cells[1].textContent === 'name').cells[3];
      return [...cell.querySelectorAll('bdi')].map((e) => ({ text: e.textContent, left: e.getBoundingClientRect().left, top: e.getBoundingClientRect().top }));
    })()`)) as { text: string; left: number; top: number }[];
    expect(places.map((place) => place.text)).toEqual([HOSTILE.imgName, HOSTILE.rloName, 'Ann']);
    const [, rlo, ann] = places;
    if (rlo!.top === ann!.top) expect(ann!.left).toBeGreaterThan(rlo!.left);
    else expect(ann!.top).toBeGreaterThan(rlo!.top);
    await page.close();
  });

  it('sorts a table by a clicked header, numbers as numbers, and back', async () => {
    const { page } = await load(reportUrl);
    const table = '#problem-email_not_an_address table';
    const column = (index: number) => page.evaluate(`[...document.querySelectorAll('${table} tbody tr')].map((row) => row.cells[${index}].textContent)`) as Promise<string[]>;
    const rows = (await column(0)).map(Number);
    expect(rows).toHaveLength(200);
    await page.click(`${table} thead th:nth-child(1) button`);
    await page.click(`${table} thead th:nth-child(1) button`);
    expect((await column(0)).map(Number)).toEqual([...rows].sort((a, b) => b - a));
    await page.click(`${table} thead th:nth-child(2) button`);
    const values = await column(1);
    expect(values).toEqual([...values].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
    expect(values.slice(0, 4)).toEqual([HOSTILE.closingScript, 'not-an-email-0', 'not-an-email-1', 'not-an-email-10']);
    await page.close();
  });

  it('shows who each problem row is: name and e-mail as text, the row\'s cells behind a click', async () => {
    const { page, errors } = await load(reportUrl);
    const row = `[...document.querySelectorAll('#problem-email_not_an_address tbody tr')].find((tr) => tr.cells[1].textContent === 'not-an-email-7')`;
    const before = (await page.evaluate(`(() => { const who = ${row}.cells[3]; return {
      name: who.querySelector('bdi.name').textContent, email: who.querySelector('bdi.email').textContent,
      open: who.querySelector('details').open, cellsShown: who.querySelector('dl.cells').checkVisibility() }; })()`)) as Record<string, unknown>;
    expect(before).toEqual({ name: 'Client 7', email: 'not-an-email-7', open: false, cellsShown: false });
    await page.evaluate(`${row}.cells[3].querySelector('summary').click()`);
    const after = (await page.evaluate(`(() => { const dl = ${row}.cells[3].querySelector('dl.cells'); return {
      shown: dl.checkVisibility(), pairs: [...dl.querySelectorAll('dt')].map((dt) => dt.textContent + '=' + dt.nextElementSibling.textContent) }; })()`)) as { shown: boolean; pairs: string[] };
    expect(after).toEqual({ shown: true, pairs: ['name=Client 7', 'email=not-an-email-7', 'country=DE', 'address=Street 7', 'Notes=(empty)'] });
    // A hostile e-mail is the text of its cell, not an element.
    const cy = await page.evaluate(`[...document.querySelectorAll('bdi.email')].filter((e) => e.textContent === '</script>').length`);
    expect(cy).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lists a value held by many rows once, with its count, its first lines and who they are', async () => {
    const input = join(temp.dir, 'germny.csv');
    const report = join(temp.dir, 'germny.html');
    const rows = Array.from({ length: 300 }, (_, n) => `Kunde ${n},kunde${n}@example.com,Germny,Weg ${n}`);
    await writeFile(input, `name,email,country,address\n${rows.join('\n')}\n`);
    expect((await cli(['validate', input, '--report', report, '--quiet'])).code).toBe(1);
    const url = pathToFileURL(report).href;
    const { page, errors, requests } = await load(url);
    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);
    const shown = (await page.evaluate(`(() => {
      const rows = [...document.querySelectorAll('#problem-country_unknown tbody tr')];
      const who = rows[0].cells[3];
      who.querySelector('summary').click();
      return { rows: rows.length, lines: rows[0].cells[0].textContent, count: rows[0].cells[2].textContent, value: rows[0].cells[1].textContent,
        first: who.querySelector('bdi.name').textContent, people: [...who.querySelectorAll('ul.people li')].map((li) => li.textContent),
        suggestion: rows[0].cells[5].textContent };
    })()`)) as Record<string, unknown>;
    expect(shown).toEqual({
      rows: 1,
      lines: `${Array.from({ length: 20 }, (_, i) => i + 2).join(', ')}, …`,
      count: '×300',
      value: 'Germny',
      first: 'Kunde 0',
      people: ['Line 3: Kunde 1 · kunde1@example.com', 'Line 4: Kunde 2 · kunde2@example.com', 'Line 5: Kunde 3 · kunde3@example.com', 'Line 6: Kunde 4 · kunde4@example.com', 'and 295 more'],
      suggestion: 'Germany (DE)',
    });
    await page.screenshot({ path: join(temp.dir, 'germny.png'), fullPage: true });
    await page.close();
  });

  it('reads with JavaScript off: every table and count is there, in file order', async () => {
    const { page, errors } = await load(reportUrl, false);
    expect(errors).toEqual([]);
    const shown = await page.evaluate(`({
      rows: [...document.querySelectorAll('#problem-email_not_an_address tbody tr')].map((row) => Number(row.cells[0].textContent)),
      buttons: document.querySelectorAll('button').length,
      invalid: document.querySelector('[data-count=invalid]').textContent.replaceAll(',', ''),
    })`);
    const { rows, ...rest } = shown as { rows: number[] };
    expect(rows).toHaveLength(200);
    expect(rows).toEqual([...rows].sort((a, b) => a - b));
    expect(rest).toEqual({ buttons: 0, invalid: String(summary.counts.invalid) });
    await page.close();
  });

  it("draws the import's chart: rows/s and in flight, the outage shaded", async () => {
    const notes = new ReportNotes({
      source: { file: 'clients.csv', format: 'csv', encoding: 'utf-8', encodingSource: 'default', delimiter: ',', delimiterSource: 'sniffed', header: { line: 1, skipped: [], source: 'first' }, sizeBytes: 100 },
      headers: ['name', 'email', 'country', 'address'],
      columns: { name: 0, email: 1, country: 2, address: 3 },
      map: {},
      unknown: [],
      dryRun: false,
    });
    for (let second = 1; second <= 30; second++) {
      notes.timeline.outage(second >= 10 && second < 15);
      notes.timeline.add(second, second < 10 ? second * 200 : second < 15 ? 1800 : 1800 + (second - 14) * 250, second >= 10 && second < 15 ? 0 : 16);
    }
    const counts = { created: 5300, failed: 0, invalid: 0, duplicate: 0, skipped: 0, not_attempted: 0 };
    const path = join(temp.dir, 'run.html');
    writeReport(path, renderReport(notes, { rows: 5300, counts, replayed: 0, normalizations: [], stopped: undefined, elapsedMs: 30_000, rowsPerSecond: 177, results: 'r.csv', failed: undefined, resumeCommand: undefined, at: new Date() }));
    const url = pathToFileURL(path).href;
    const { page, errors, requests } = await load(url);
    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);
    const chart = await page.evaluate(`({
      lines: document.querySelectorAll('svg.chart polyline').length,
      pauses: document.querySelectorAll('svg.chart rect.pause').length,
      width: document.querySelector('svg.chart').getBoundingClientRect().width,
    })`);
    // Seconds 10 to 14 down: one shaded span.
    expect(chart).toMatchObject({ lines: 2, pauses: 1 });
    expect((chart as { width: number }).width).toBeGreaterThan(300);
    await page.screenshot({ path: join(temp.dir, 'run.png'), fullPage: true });
    await page.close();
  });
});
