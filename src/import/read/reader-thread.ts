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
 * The two threads share one piece of work: the end of each record's results line (its `echo`:
 * the values quoted and formula-escaped as the results file writes them, in UTF-8). The reader
 * makes them while it is ahead (from a batch it found no credit to send, until one the
 * consumer had all its credit back for), so that a busy consumer copies bytes instead of
 * quoting and encoding every value; a reader that is itself the limit (an .xlsx's XML) leaves
 * them to the consumer. They cross as one transferred buffer a batch: as a second string they
 * were promoted with the batch in the reader's small young generation (bench/README.md).
 */
import { existsSync } from 'node:fs';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { csvSafeCell } from '../../infra/csv-text.js';
import { type CodeOf, InputError, UsageError } from '../../errors.js';
import type { InspectedFile } from './inspect-file.js';
import type { ByteRange, InvalidCell, RawRecord, ReadOptions, RowSource, SourceInfo } from './types.js';

/**
 * Batches (one per 64 KiB chunk) the worker may parse ahead of the consumer: enough that a
 * moment's delay on either thread does not stall the other, few enough to stay small. At 2,
 * on a machine shared with other work, each thread sat waiting for the other 0.3–1.5 s of a
 * 1M-row validate (bench/README.md).
 */
export const BATCHES_AHEAD = 4;

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
      /** Every record's echo (RawRecord.echo), one after another, and where each ends. */
      echo?: Uint8Array | undefined;
      echoEnds?: Uint32Array | undefined;
      /** The records holding invalid bytes (rare): their index in the batch and cells. */
      invalid?: { index: number; cells: InvalidCell[] }[] | undefined;
      bytesRead: number;
    }
  | { type: 'end'; bytesRead: number }
  | { type: 'error'; error: SentError };

/** A batch as it crosses. */
export type PackedBatch = Omit<Extract<FromWorker, { type: 'batch' }>, 'type' | 'bytesRead'>;

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
export function packBatch(records: readonly RawRecord[], options: { mayHoldNul: boolean; echo: boolean }): PackedBatch {
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
  const packed: PackedBatch = nul ? { firstRow, counts, lines, text: '', values } : { firstRow, counts, lines, text: values.join('\0') };
  if (options.echo) Object.assign(packed, echoes(records));
  if (invalid.length > 0) packed.invalid = invalid;
  return packed;
}

/** What a packed batch hands over rather than copies. */
export function transferOf(packed: PackedBatch): ArrayBuffer[] {
  const buffers = [packed.counts.buffer, packed.lines.buffer];
  if (packed.echo !== undefined) buffers.push(packed.echo.buffer);
  if (packed.echoEnds !== undefined) buffers.push(packed.echoEnds.buffer);
  return buffers as ArrayBuffer[];
}

/**
 * Where echoes are written, reused batch after batch (grown for a batch that needs more); made
 * on the reader thread's first echo (this module loads on both threads).
 */
let scratch: Buffer | undefined;

/**
 * Every record's echo, one after another in one buffer, and where each ends. Each cell is
 * encoded straight into the scratch buffer: no string of the whole batch is made.
 */
function echoes(records: readonly RawRecord[]): { echo: Uint8Array; echoEnds: Uint32Array } {
  scratch ??= Buffer.allocUnsafeSlow(256 * 1024);
  const echoEnds = new Uint32Array(records.length);
  let at = 0;
  for (let i = 0; i < records.length; i++) {
    for (const value of records[i]!.values) {
      const cell = csvSafeCell(value);
      // A comma, then at most 3 bytes of UTF-8 per UTF-16 unit; then room for the LF.
      if (at + 2 + cell.length * 3 > scratch.length) scratch = grown(scratch, at, at + 2 + cell.length * 3);
      scratch[at++] = 0x2c;
      at += scratch.write(cell, at);
    }
    if (at === scratch.length) scratch = grown(scratch, at, at + 1);
    scratch[at++] = 0x0a;
    echoEnds[i] = at;
  }
  return { echo: Uint8Array.prototype.slice.call(scratch, 0, at), echoEnds };
}

function grown(buffer: Buffer, used: number, needed: number): Buffer {
  const larger = Buffer.allocUnsafeSlow(Math.max(needed, buffer.length * 2));
  buffer.copy(larger, 0, 0, used);
  return larger;
}

export function unpackBatch(batch: PackedBatch): RawRecord[] {
  const { counts, lines, echoEnds } = batch;
  let total = 0;
  for (const count of counts) total += count;
  const values = batch.values ?? (total === 0 ? [] : batch.text.split('\0'));
  if (values.length !== total) throw new Error(`reader thread: a batch of ${total} values arrived as ${values.length}`);
  const echo = batch.echo && Buffer.from(batch.echo.buffer, batch.echo.byteOffset, batch.echo.length);
  if (echo !== undefined && echoEnds?.length !== counts.length) {
    throw new Error(`reader thread: ${counts.length} records arrived with ${echoEnds?.length ?? 0} echoes`);
  }
  const records: RawRecord[] = new Array<RawRecord>(counts.length);
  let at = 0;
  for (let i = 0, echoAt = 0; i < counts.length; i++) {
    const end = at + counts[i]!;
    const record: RawRecord = { row: batch.firstRow + i, line: lines[i]!, values: values.slice(at, end) };
    if (echo !== undefined) {
      const range: ByteRange = { bytes: echo, start: echoAt, end: echoEnds![i]! };
      record.echo = range;
      echoAt = range.end;
    }
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
    // The parser's garbage dies within a chunk: a small young generation keeps the thread small.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
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
