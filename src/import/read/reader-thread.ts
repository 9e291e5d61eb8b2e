/**
 * Reading on a second thread: the worker (reader-worker.ts) reads and parses a CSV file or an
 * .xlsx sheet while this thread checks, keys and writes the rows before. Worth it when the
 * consumer is as busy as the parser (validate), on a machine with a second core. The RowSource
 * it returns is the same as the inline reader's: the same batches, rows, lines and InputErrors.
 *
 * A batch crosses as one string (values joined by NUL) plus typed arrays; splitting it here
 * costs less than structured-cloning thousands of small arrays. The CSV reader never lets a
 * NUL through (it is an input error); a sheet can hold one (`_x0000_`), and a batch that does
 * crosses as arrays.
 *
 * The two threads share one piece of work: each record's `echo`, its values as the results
 * file writes them. The reader makes them while it is ahead (it waited for the consumer before
 * its last batch), so a busy consumer only appends them; a reader that is itself the limit
 * (an .xlsx's XML) leaves them to the consumer. The echoes cross as a second string: each
 * string stays under V8's large-object size (128 KiB), since a larger one is allocated in the
 * old generation, where a batch's garbage piled up until a full collection (+50 MB RSS).
 */
import { existsSync } from 'node:fs';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { csvSafeCell } from '../../csv-text.js';
import { type CodeOf, InputError, UsageError } from '../../errors.js';
import type { InspectedFile } from './inspect-file.js';
import type { InvalidCell, RawRecord, ReadOptions, RowSource, SourceInfo } from './types.js';

/**
 * Batches (one per 64 KiB chunk) the worker may parse ahead of the consumer: enough that a
 * moment's delay on either thread does not stall the other, few enough to stay small.
 */
export const BATCHES_AHEAD = 2;

export type ToWorker = { type: 'more' } | { type: 'close' };

export type FromWorker =
  | { type: 'open'; info: SourceInfo; headers: string[] }
  | {
      type: 'batch';
      firstRow: number;
      /** Values per record. */
      counts: Uint32Array;
      lines: Uint32Array;
      /** Every value of the batch, in order, joined by NUL; or, when a value holds a NUL, `values`. */
      text: string;
      values?: string[] | undefined;
      /** Each record's echo (RawRecord.echo), joined by NUL; or, with `values`, `echoList`. */
      echoes?: string | undefined;
      echoList?: string[] | undefined;
      /** The records holding invalid bytes (rare): their index in the batch and cells. */
      invalid?: { index: number; cells: InvalidCell[] }[] | undefined;
      bytesRead: number;
    }
  | { type: 'end'; bytesRead: number }
  | { type: 'error'; error: SentError };

export interface WorkerInput {
  inspected: InspectedFile;
  options: ReadOptions;
  /** Both ways: batches out, credit in. */
  port: MessagePort;
}

/**
 * An error as it crosses threads. The reader's expected failures (InputError, and the
 * UsageError of an --encoding or --delimiter it cannot use) keep their class, code, file and
 * line, so they end the run as they would inline: one line, exit 2.
 */
export type SentError =
  | { kind: 'input' | 'usage'; message: string; code: string; file: string | undefined; line: number | undefined }
  | { kind: 'internal'; message: string; code: string | undefined; stack: string | undefined };

export function sendableError(error: unknown): SentError {
  if (error instanceof InputError) {
    return { kind: 'input', message: error.message, code: error.code, file: error.file, line: error.line };
  }
  if (error instanceof UsageError) {
    return { kind: 'usage', message: error.message, code: error.code, file: undefined, line: undefined };
  }
  const failure = error instanceof Error ? error : new Error(String(error));
  const code = (failure as NodeJS.ErrnoException).code;
  return { kind: 'internal', message: failure.message, code, stack: failure.stack };
}

function receivedError(sent: SentError): Error {
  switch (sent.kind) {
    case 'input': {
      const details: { file?: string; line?: number } = {};
      if (sent.file !== undefined) details.file = sent.file;
      if (sent.line !== undefined) details.line = sent.line;
      return new InputError(sent.message, sent.code as CodeOf<'InputError'>, details);
    }
    case 'usage':
      return new UsageError(sent.message, sent.code as CodeOf<'UsageError'>);
    case 'internal': {
      const error: NodeJS.ErrnoException = new Error(`reader thread: ${sent.message}`);
      if (sent.code !== undefined) error.code = sent.code;
      if (sent.stack !== undefined) error.stack = `${error.message}\n(reader thread) ${sent.stack}`;
      return error;
    }
  }
}

/**
 * Joins a batch's values for the trip; `unpackBatch` undoes it. With `echo`, each record's
 * echo (RawRecord.echo) comes along.
 */
export function packBatch(records: readonly RawRecord[], options: { mayHoldNul: boolean; echo: boolean }) {
  const counts = new Uint32Array(records.length);
  const lines = new Uint32Array(records.length);
  const values: string[] = [];
  const invalid: { index: number; cells: InvalidCell[] }[] = [];
  let nul = false;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    counts[i] = record.values.length;
    lines[i] = record.line;
    if (record.invalidBytes !== undefined) invalid.push({ index: i, cells: record.invalidBytes });
    for (const value of record.values) {
      if (options.mayHoldNul && !nul) nul = value.includes('\0');
      values.push(value);
    }
  }
  const firstRow = records[0]?.row ?? 0;
  const packed = nul ? { firstRow, counts, lines, text: '', values } : { firstRow, counts, lines, text: values.join('\0') };
  const echoes = options.echo ? records.map((record) => echoOf(record.values)) : undefined;
  const echoed = echoes === undefined ? packed : { ...packed, ...(nul ? { echoList: echoes } : { echoes: echoes.join('\0') }) };
  return invalid.length === 0 ? echoed : { ...echoed, invalid };
}

/** The values as the results file writes them (formatLine's cells). */
function echoOf(values: readonly string[]): string {
  let echo = '';
  for (let v = 0; v < values.length; v++) echo += v === 0 ? csvSafeCell(values[v]!) : `,${csvSafeCell(values[v]!)}`;
  return echo;
}

export function unpackBatch(batch: {
  firstRow: number;
  counts: Uint32Array;
  lines: Uint32Array;
  text: string;
  values?: string[] | undefined;
  echoes?: string | undefined;
  echoList?: string[] | undefined;
  invalid?: { index: number; cells: InvalidCell[] }[] | undefined;
}): RawRecord[] {
  const { counts, lines } = batch;
  let total = 0;
  for (const count of counts) total += count;
  const values = batch.values ?? (total === 0 ? [] : batch.text.split('\0'));
  if (values.length !== total) throw new Error(`reader thread: a batch of ${total} values arrived as ${values.length}`);
  const echoes = batch.echoList ?? (counts.length === 0 ? [] : batch.echoes?.split('\0'));
  if (echoes !== undefined && echoes.length !== counts.length) {
    throw new Error(`reader thread: ${counts.length} records arrived with ${echoes.length} echoes`);
  }
  const records: RawRecord[] = new Array<RawRecord>(counts.length);
  let at = 0;
  for (let i = 0; i < counts.length; i++) {
    const end = at + counts[i]!;
    const record: RawRecord = { row: batch.firstRow + i, line: lines[i]!, values: values.slice(at, end) };
    if (echoes !== undefined && end > at) record.echo = echoes[i]!;
    records[i] = record;
    at = end;
  }
  for (const { index, cells } of batch.invalid ?? []) records[index]!.invalidBytes = cells;
  return records;
}

/**
 * The worker's module. Run from the TypeScript sources (the test runner), it is the built
 * copy in dist/: a worker thread cannot load .ts files.
 */
function workerUrl(): URL {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new URL('./reader-worker.js', here);
  const built = new URL(here.replace(/\/src\/import\/read\/[^/]+\.ts$/, '/dist/import/read/reader-worker.js'));
  if (built.href === here || !existsSync(built)) throw new Error(`no built reader worker at ${built.href}: run npm run build`);
  return built;
}

/** The reader thread, and the port its batches come on. */
function startReader(inspected: InspectedFile, options: ReadOptions): { worker: Worker; port: MessagePort } {
  // A port of our own, not the worker's: a batch already sent is taken from it at once
  // (receiveMessageOnPort), without waiting for the event loop's next turn to deliver it.
  const { port1: port, port2 } = new MessageChannel();
  const input: WorkerInput = { inspected, options, port: port2 };
  const worker = new Worker(workerUrl(), {
    workerData: input,
    transferList: [port2],
    // The parser's garbage dies within a chunk: a small young generation keeps the thread
    // small. Not too small: at 4 MB a batch's strings outlived two collections and were
    // promoted, and the old generation grew to ~30 MB between full collections (+40 MB RSS).
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  });
  return { worker, port };
}

/** Opens `inspected` (a CSV or .xlsx file) on a reader thread; resolves once its header row is read. */
export async function openInThread(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  const { worker, port } = startReader(inspected, options);
  const inbox: FromWorker[] = [];
  let waiting: (() => void) | undefined;
  let failure: Error | undefined;
  let exited = false;
  let onExit = () => {};
  const exit = new Promise<void>((resolve) => (onExit = resolve));
  port.on('message', (message: FromWorker) => {
    inbox.push(message);
    waiting?.();
  });
  worker.on('error', (error) => {
    failure ??= receivedError(sendableError(error));
    waiting?.();
  });
  worker.once('exit', (code) => {
    exited = true;
    port.close();
    failure ??= new Error(`reader thread stopped (exit code ${code}) before the end of the file`);
    waiting?.();
    onExit();
  });
  const next = async (): Promise<FromWorker> => {
    for (;;) {
      const message = inbox.shift() ?? (receiveMessageOnPort(port)?.message as FromWorker | undefined);
      if (message !== undefined) return message;
      if (failure !== undefined) throw failure;
      await new Promise<void>((resolve) => {
        waiting = () => {
          waiting = undefined;
          resolve();
        };
      });
    }
  };

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      if (exited) return;
      port.postMessage({ type: 'close' } satisfies ToWorker);
      // It closes the file and ends; a thread that does not answer is stopped.
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await exit;
      clearTimeout(timer);
    })();
    return closing;
  };

  let bytesRead = 0;
  async function* batches(): AsyncGenerator<RawRecord[]> {
    try {
      for (;;) {
        // Closed by its owner: the batches still in the inbox are not wanted.
        if (closing !== undefined) return;
        const message = await next();
        if (message.type === 'end') {
          bytesRead = message.bytesRead;
          return;
        }
        if (message.type === 'error') throw receivedError(message.error);
        if (message.type !== 'batch') throw new Error(`reader thread: unexpected ${message.type} message`);
        bytesRead = message.bytesRead;
        port.postMessage({ type: 'more' } satisfies ToWorker);
        yield unpackBatch(message);
      }
    } finally {
      await close();
    }
  }

  try {
    const opened = await next();
    if (opened.type === 'error') throw receivedError(opened.error);
    if (opened.type !== 'open') throw new Error(`reader thread: unexpected ${opened.type} message`);
    return { info: { ...opened.info, thread: true }, headers: opened.headers, batches: batches(), bytesRead: () => bytesRead, close };
  } catch (error) {
    await close();
    throw error;
  }
}
