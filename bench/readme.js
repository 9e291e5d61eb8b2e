// Writes the figures of bench/results.json into the documents that show them: the whole table
// into bench/README.md, the headline rows into README.md's Performance section, each between
// its `<!-- bench:… -->` markers. Run: npm run bench:readme [results.json]. bench/run.js calls
// it after a full run. `--check` exits 1 if a document is not what results.json gives.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { formatTable } from './lib/report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_RESULTS = fileURLToPath(new URL('results.json', import.meta.url));

/** The rows a user asks about first: each part's main figure beside its floor. */
const HEADLINE = [
  /^import [\d,]+ rows, C=8$/,
  /^(150|300) ms, [\d,]+ rows, no flags/,
  /^rate limit 100\/s, [\d,]+ rows, no flags/,
  /^peak RSS, import with 1,000 requests in flight/,
  /^validate [\d,]+ rows( \(median of \d+ rounds\))?$/,
  /^validate [\d,]+ rows: peak RSS \(CSV\b/,
  /^export [\d,]+ clients$/,
  /^export [\d,]+ clients at 50 ms: --prefetch auto/,
  /^import rows [\d,]+ → /,
  /^ccs-bulk import \(signed/,
];

function describeRun(results) {
  const loads = results.parts.flatMap((part) => part.rows.map((row) => row.otherLoad ?? 0));
  return (
    `${results.cpus} × ${results.cpuModel} vCPU, Node ${results.node.replace(/^v/, '')}, commit ` +
    `${results.source.commit}${results.source.uncommittedChanges ? ' (uncommitted changes)' : ''}, ` +
    `${results.date.slice(0, 10)}, ${Math.round(results.totalSeconds)} s; other load ≤ ` +
    `${Math.max(0, ...loads).toFixed(2)} cores on every row`
  );
}

export function benchTable(results) {
  return `Run of ${describeRun(results)}:\n\n${formatTable(results.parts.flatMap((part) => part.rows))}`;
}

export function headlineTable(results) {
  const rows = results.parts
    .flatMap((part) => part.rows)
    .filter((row) => HEADLINE.some((pattern) => pattern.test(row.measure)));
  const cells = (row) => [
    row.measure,
    row.figure,
    row.baseline,
    row.ratio === undefined || row.ratio === null ? '—' : row.ratio.toFixed(2),
    row.target,
    row.result,
  ];
  const lines = [
    '| Measure | Figure | Floor / baseline | Ratio | Target | Result |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${cells(row).join(' | ')} |`),
  ];
  return `Last full run (${describeRun(results)}):\n\n${lines.join('\n')}`;
}

/** `text` with what lies between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` replaced. */
export function replaceBlock(text, name, body) {
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to < from) throw new Error(`no ${start} … ${end} block`);
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`;
}

export function documents(results) {
  return [
    { path: `${ROOT}bench/README.md`, name: 'table', body: benchTable(results) },
    { path: `${ROOT}README.md`, name: 'headline', body: headlineTable(results) },
  ];
}

/** Rewrites (or, with check, compares) the documents; returns the paths that differ. */
export function writeBenchDocs(resultsPath = DEFAULT_RESULTS, { check = false } = {}) {
  const results = JSON.parse(readFileSync(resultsPath, 'utf8'));
  const stale = [];
  for (const doc of documents(results)) {
    const text = readFileSync(doc.path, 'utf8');
    const next = replaceBlock(text, doc.name, doc.body);
    if (next === text) continue;
    stale.push(doc.path);
    if (!check) writeFileSync(doc.path, next);
  }
  return stale;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const path = args.find((arg) => !arg.startsWith('--')) ?? DEFAULT_RESULTS;
  const stale = writeBenchDocs(path, { check });
  for (const file of stale) process.stderr.write(`${check ? 'not generated from' : 'updated from'} ${path}: ${file}\n`);
  process.exit(check && stale.length > 0 ? 1 : 0);
}
