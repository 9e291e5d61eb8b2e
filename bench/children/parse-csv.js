/**
 * The parser baseline: one bare csv-parse pass (`columns: true`) over a file, counting
 * records. Prints one JSON line. argv[2] is the file.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';

const started = performance.now();
let rows = 0;
const parser = createReadStream(process.argv[2]).pipe(parse({ columns: true }));
parser.on('data', () => {
  rows++;
});
await new Promise((resolve, reject) => {
  parser.once('end', resolve);
  parser.once('error', reject);
});
const elapsedS = (performance.now() - started) / 1000;
process.stdout.write(`${JSON.stringify({ rows, elapsedS, rowsPerSecond: rows / elapsedS })}\n`);
