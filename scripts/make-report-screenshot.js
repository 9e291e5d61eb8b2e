#!/usr/bin/env node
// Makes docs/images/review-page.png, the README's picture of the review page: runs the built
// CLI's `validate fixtures/clients.csv --report` (npm run build first) and screenshots the page
// in headless Chromium (CHROMIUM picks the executable; default /usr/bin/chromium).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'docs', 'images', 'review-page.png');
const temp = mkdtempSync(join(tmpdir(), 'review-page-'));
try {
  const page = join(temp, 'review.html');
  // In a folder of its own, so the page names the files as a user would type them.
  copyFileSync(join(root, 'fixtures', 'clients.csv'), join(temp, 'clients.csv'));
  const run = spawnSync(process.execPath, [join(root, 'dist', 'bin.cjs'), 'validate', 'clients.csv', '--report', 'review.html', '--quiet'], {
    stdio: 'inherit',
    cwd: temp,
  });
  if (run.status !== 1) throw new Error(`validate exited ${run.status}, expected 1 (invalid rows)`);
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--hide-scrollbars'],
  });
  try {
    const tab = await browser.newPage();
    await tab.setViewport({ width: 1100, height: 1400, deviceScaleFactor: 1 });
    await tab.goto(pathToFileURL(page).href, { waitUntil: 'load' });
    mkdirSync(join(root, 'docs', 'images'), { recursive: true });
    // The top of the page: the file, the outcomes and the first problem groups.
    await tab.screenshot({ path: out, clip: { x: 0, y: 0, width: 1100, height: 1400 } });
  } finally {
    await browser.close();
  }
  console.log(`wrote ${out}`);
} finally {
  rmSync(temp, { recursive: true, force: true });
}
