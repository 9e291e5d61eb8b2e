/** `ccs-bulk results merge`: shard results files → one, in row order; several sources' → one report; with one summary. */
import type { Io } from '../infra/io.js';
import { mergeResults } from '../import/record/merge-results.js';
import { printable } from '../infra/printable.js';

export async function runResultsMerge(args: { files: string[]; out: string; json: boolean }, io: Io): Promise<number> {
  const summary = await mergeResults(args.files, args.out);
  if (args.json) io.stdout.write(`${JSON.stringify(summary)}\n`);
  const parts = Object.entries(summary.counts)
    .filter(([, n]) => n > 0)
    .map(([outcome, n]) => `${n} ${outcome}`);
  const of = summary.sources === undefined ? '' : ` of ${summary.sources.length} sources`;
  io.stderr.write(`Merged ${summary.files.length} files${of}: ${summary.rows} rows (${parts.join(', ')})\n`);
  for (const source of summary.sources ?? []) {
    const counts = Object.entries(source.counts).filter(([, n]) => n > 0).map(([outcome, n]) => `${n} ${outcome}`);
    io.stderr.write(`  ${printable(source.source)}: ${source.rows} rows (${counts.join(', ')}) from ${source.files.map(printable).join(', ')}\n`);
  }
  io.stderr.write(`  results: ${summary.out}\n`);
  return summary.counts.failed + summary.counts.invalid + summary.counts.not_attempted > 0 ? 1 : 0;
}
