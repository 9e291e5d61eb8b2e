/**
 * The script a user writes instead of a tool: fetch() one row at a time, unsigned, no
 * retries, no results file. Prints one JSON line.
 * argv[2] is JSON: { url, token, bodiesFile, rows, timeoutMs }.
 */
import { readFileSync } from 'node:fs';

const options = JSON.parse(process.argv[2] ?? '{}');
const bodies = readFileSync(options.bodiesFile, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .slice(0, options.rows);
const statuses = {};
const started = performance.now();
const deadline = started + options.timeoutMs;
for (const body of bodies) {
  if (performance.now() > deadline) break;
  const response = await fetch(`${options.url}/v1/client`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
    body,
  });
  await response.text();
  statuses[response.status] = (statuses[response.status] ?? 0) + 1;
}
const elapsedS = (performance.now() - started) / 1000;
const rows = Object.values(statuses).reduce((a, b) => a + b, 0);
process.stdout.write(`${JSON.stringify({ rows, statuses, elapsedS, rowsPerSecond: rows / elapsedS })}\n`);
