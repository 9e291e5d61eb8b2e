/**
 * Puts a finished results file in row order. Lines are written as rows finish (a crash keeps
 * every finished row), which under concurrency is nearly but not quite row order, and a resumed
 * file holds the earlier run's lines before this run's. At the end of the run the file is
 * rewritten sorted, atomically (a temp file beside it, renamed over it), with flat memory: an
 * external merge sort. Lines are read in chunks of at most CHUNK_CHARS, each chunk sorted and
 * written to a temp run; the runs are then merged. A file that fits in one chunk is sorted in
 * memory and written once. The caller skips all of this when the lines were already in order.
 */
import { closeSync, createReadStream, fsyncSync, renameSync, rmSync } from 'node:fs';
import { parse } from 'csv-parse';
import { csvRecord } from '../csv-text.js';
import { OutputError } from '../errors.js';
import { tempBeside } from '../temp-files.js';
import { BlockWriter, openPrivate } from './output-files.js';

/** Characters of results lines held at once (about twice that in bytes of memory). */
const CHUNK_CHARS = 16 * 1024 * 1024;

interface Line {
  row: number;
  text: string;
}

export async function sortResults(path: string, chunkChars = CHUNK_CHARS): Promise<void> {
  const runs: string[] = [];
  try {
    let header: string | undefined;
    let chunk: Line[] = [];
    let chars = 0;
    for await (const record of readRecords(path)) {
      const text = csvRecord(record, '\n');
      if (header === undefined) {
        header = text;
        continue;
      }
      chunk.push({ row: Number(record[0]), text });
      chars += text.length;
      if (chars >= chunkChars) {
        runs.push(writeRun(path, chunk));
        chunk = [];
        chars = 0;
      }
    }
    if (header === undefined) return;
    if (runs.length === 0) {
      replaceWith(path, header, [sorted(chunk)]);
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
  return lines.sort((a, b) => a.row - b.row);
}

function writeRun(path: string, lines: Line[]): string {
  const run = tempBeside(path);
  const fd = openPrivate(run, 'wx');
  try {
    const out = new BlockWriter(fd, run);
    for (const line of sorted(lines)) out.write(line.text);
    out.flush();
  } finally {
    closeSync(fd);
  }
  return run;
}

/** Writes header + lines to a temp file beside `path`, then renames it over `path`. */
function replaceWith(path: string, header: string, parts: Iterable<Iterable<Line>>): void {
  const temp = tempBeside(path);
  const fd = openPrivate(temp, 'wx');
  try {
    const out = new BlockWriter(fd, temp);
    out.write(header);
    for (const part of parts) for (const line of part) out.write(line.text);
    out.flush();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw sortFailure(path, error);
  }
}

/** k-way merge of sorted runs (a handful: one per CHUNK_CHARS of results), smallest row first. */
async function replaceWithMerge(path: string, header: string, runs: string[]): Promise<void> {
  const temp = tempBeside(path);
  const fd = openPrivate(temp, 'wx');
  try {
    const out = new BlockWriter(fd, temp);
    out.write(header);
    const heads = await Promise.all(runs.map(async (run) => openRun(run)));
    for (;;) {
      let min: RunHead | undefined;
      for (const head of heads) if (head.line && (!min || head.line.row < min.line!.row)) min = head;
      if (!min) break;
      out.write(min.line!.text);
      await min.next();
    }
    out.flush();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw sortFailure(path, error);
  }
}

interface RunHead {
  line: Line | undefined;
  next(): Promise<void>;
}

async function openRun(run: string): Promise<RunHead> {
  const records = readRecords(run)[Symbol.asyncIterator]();
  const head: RunHead = {
    line: undefined,
    async next() {
      const step = await records.next();
      head.line = step.done ? undefined : { row: Number(step.value[0]), text: csvRecord(step.value, '\n') };
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
