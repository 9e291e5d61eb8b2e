/** `ccs-bulk results merge`: shard results files → one, in row order; several sources' → one report; the shards' --failed files → one; with one summary. */
import type { Io } from '../infra/io.js';
import { mergeResults } from '../import/record/merge-results.js';
import { printable } from '../infra/printable.js';

export interface ResultsMergeArgs {
  files: string[];
  out: string;
  json: boolean;
  /** Replace an existing --out (kept beside it as a dated .bak copy first). */
  overwrite?: boolean | undefined;
  /** The files are the shards' --failed files. */
  failed?: boolean | undefined;
}

export async function runResultsMerge(args: ResultsMergeArgs, io: Io): Promise<number> {
  if (args.failed === true) return runFailedMerge(args, io);
  const summary = await mergeResults(args.files, args.out, { overwrite: args.overwrite });
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
  io.stderr.write(`  results: ${printable(summary.out)}\n`);
  if (summary.backup !== undefined) io.stderr.write(`  the file it replaced: ${printable(summary.backup)}\n`);
  return summary.counts.failed + summary.counts.invalid + summary.counts.not_attempted > 0 ? 1 : 0;
}

/** The failed rows of every shard in one file: exit 0 (the rows are what the file is for). */
async function runFailedMerge(args: ResultsMergeArgs, io: Io): Promise<number> {
  const { mergeFailed } = await import('../import/record/merge-failed.js');
  const summary = await mergeFailed(args.files, args.out, { overwrite: args.overwrite });
  if (args.json) io.stdout.write(`${JSON.stringify(summary)}\n`);
  io.stderr.write(`Merged ${summary.files.length} failed files: ${summary.rows} rows to fix\n  failed: ${printable(summary.out)}\n`);
  if (summary.backup !== undefined) io.stderr.write(`  the file it replaced: ${printable(summary.backup)}\n`);
  return 0;
}
