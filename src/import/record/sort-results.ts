/**
 * Puts a finished results file in row order. Lines are written as rows finish (a crash keeps
 * every finished row), which under concurrency is nearly but not quite row order, and a resumed
 * file holds the earlier run's lines before this run's. At the end of the run the file is
 * rewritten sorted, atomically (a temp file beside it, renamed over it), with flat memory: an
 * external merge sort. Lines are read in chunks of at most CHUNK_BYTES, each chunk sorted and
 * written to a temp run; the runs are then merged. A file that fits in one chunk is sorted in
 * memory and written once. The caller skips all of this when the lines were already in order.
 */
import { closeSync, createReadStream, fsyncSync, renameSync, rmSync } from 'node:fs';
import { parse } from 'csv-parse';
import { csvRecord } from '../../infra/csv-text.js';
import { OutputError } from '../../errors.js';
import { BytesWriter, mergeRuns, type RunHead, type SortLine, sortLines, writeRun as writeSortedRun } from '../../infra/external-sort.js';
import { tempBeside } from '../../infra/temp-files.js';
import { createPrivate } from '../../infra/output-files.js';

/** Bytes of results lines held at once. */
const CHUNK_BYTES = 8 * 1024 * 1024;

/** A results line keyed by its row number (infra/external-sort.ts says why bytes). */
type Line = SortLine<number>;

const byRow = (a: number, b: number) => a - b;

export async function sortResults(path: string, chunkBytes = CHUNK_BYTES): Promise<void> {
  const runs: string[] = [];
  try {
    let header: Buffer | undefined;
    let chunk: Line[] = [];
    let held = 0;
    for await (const record of readRecords(path)) {
      const bytes = Buffer.from(csvRecord(record, '\n'), 'utf8');
      if (header === undefined) {
        header = bytes;
        continue;
      }
      chunk.push({ key: Number(record[0]), bytes });
      held += bytes.length;
      if (held >= chunkBytes) {
        runs.push(writeRun(path, chunk));
        chunk = [];
        held = 0;
      }
    }
    if (header === undefined) return;
    if (runs.length === 0) {
      await replaceWith(path, header, [sorted(chunk)]);
      return;
    }
    if (chunk.length > 0) runs.push(writeRun(path, chunk));
    chunk = [];
    await replaceWithMerge(path, header, runs);
  } finally {
    for (const run of runs) rmSync(run, { force: true });
  }
}

function readRecords(path: string): AsyncIterable<string[]> {
  return createReadStream(path).pipe(parse({ relax_column_count: true, skip_empty_lines: true, bom: true }));
}

function sorted(lines: Line[]): Iterable<Line> {
  return sortLines(lines, byRow);
}

function writeRun(path: string, lines: Line[]): string {
  return writeSortedRun(path, lines, byRow);
}

/** Writes header + lines to a temp file beside `path`, then renames it over `path`. */
/** The lines of one sorted chunk, as the file's new content. */
function replaceWith(path: string, header: Buffer, parts: Iterable<Iterable<Line>>): Promise<void> {
  return rewrite(path, header, (out) => {
    for (const part of parts) for (const line of part) out.write(line.bytes);
  });
}

/** k-way merge of sorted runs (a handful: one per CHUNK_CHARS of results), smallest row first. */
function replaceWithMerge(path: string, header: Buffer, runs: string[]): Promise<void> {
  return rewrite(path, header, async (out) => {
    const heads = await Promise.all(runs.map(async (run) => openRun(run)));
    await mergeRuns(heads, byRow, (line) => out.write(line.bytes));
  });
}

/** `path` written anew through a temp file beside it, fsynced and renamed over it: a crash leaves the old file whole. */
async function rewrite(path: string, header: Buffer, body: (out: BytesWriter) => void | Promise<void>): Promise<void> {
  const temp = tempBeside(path);
  const fd = createPrivate(temp);
  try {
    const out = new BytesWriter(fd, temp);
    out.write(header);
    await body(out);
    out.flush();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw sortFailure(path, error);
  }
}

async function openRun(run: string): Promise<RunHead<number>> {
  const records = readRecords(run)[Symbol.asyncIterator]();
  const head: RunHead<number> = {
    line: undefined,
    async next() {
      const step = await records.next();
      head.line = step.done ? undefined : { key: Number(step.value[0]), bytes: Buffer.from(csvRecord(step.value, '\n'), 'utf8') };
    },
  };
  await head.next();
  return head;
}

function sortFailure(path: string, error: unknown): OutputError {
  if (error instanceof OutputError) return error;
  // The file is left as it was: complete, in the order rows finished.
  return new OutputError(`cannot put ${path} in row order: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; its lines are complete, in the order rows finished`);
}
