#!/usr/bin/env node
// The slowest test files of a run, from vitest's JSON report (`vitest run --reporter=json
// --outputFile=report.json`): per file its duration (end - start, so time spent waiting for a
// worker is not counted), its test count, and the run's totals.
// Usage: node scripts/slowest-tests.js report.json [--top 10] [--json]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '10' }, json: { type: 'boolean', default: false } },
});
if (positionals.length !== 1) {
  console.error('usage: node scripts/slowest-tests.js report.json [--top 10] [--json]');
  process.exit(2);
}
const report = JSON.parse(readFileSync(positionals[0], 'utf8'));
const files = report.testResults.map((file) => {
  const seconds = (file.endTime - file.startTime) / 1000;
  const name = file.name.includes('/test/') ? `test/${file.name.split('/test/').pop()}` : relative('.', file.name);
  const tests = file.assertionResults?.length ?? 0;
  const failed = file.assertionResults?.filter((test) => test.status === 'failed').length ?? 0;
  return { name, seconds: Math.round(seconds * 10) / 10, tests, failed };
});
files.sort((a, b) => b.seconds - a.seconds);
const top = files.slice(0, Number(values.top));
const starts = report.testResults.map((file) => file.startTime);
const ends = report.testResults.map((file) => file.endTime);
const totals = {
  files: files.length,
  tests: report.numTotalTests,
  passed: report.numPassedTests,
  failed: report.numFailedTests,
  skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
  // From the first file's start to the last file's end (vitest's start-up not included).
  spanSeconds: Math.round((Math.max(...ends) - Math.min(...starts)) / 100) / 10,
  fileSecondsSum: Math.round(files.reduce((sum, file) => sum + file.seconds, 0)),
};
if (values.json) {
  console.log(JSON.stringify({ totals, slowest: top }, null, 2));
} else {
  for (const file of top) {
    const failed = file.failed > 0 ? `  (${file.failed} failed)` : '';
    console.log(`${file.seconds.toFixed(1).padStart(7)} s  ${String(file.tests).padStart(4)} tests  ${file.name}${failed}`);
  }
  console.log(
    `${totals.files} files, ${totals.tests} tests (${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped); ` +
      `files ran from first start to last end in ${totals.spanSeconds} s, ${totals.fileSecondsSum} s summed`,
  );
}
