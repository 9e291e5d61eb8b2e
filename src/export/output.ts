/**
 * Where the export's bytes go. A file is written to a new temp file beside it (same directory,
 * so the rename is atomic on one file system), private (0600: it holds bank details) while it
 * is written, given the mode asked for (`--file-mode`, to share it) only just before it is
 * renamed into place on success: a failed or interrupted export never leaves a half file under
 * the final name, and removes its temp file. A stream (stdout) is written as is and not ended.
 * Every write waits for 'drain' when the destination lags: memory stays one page deep.
 */
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { chmod, rename, stat, unlink } from 'node:fs/promises';
import { OutputError, UsageError } from '../errors.js';
import { createPrivate, refuseLink } from '../infra/output-files.js';
import { shownPath } from '../infra/printable.js';
import { tempBeside } from '../infra/temp-files.js';

export interface Output {
  /** The final path, or the stream's label. */
  readonly target: string;
  bytes: number;
  write(data: string | Uint8Array): Promise<void>;
  /**
   * True once the reader of a stream went away (`| head`): a pipe closed early is the end the
   * reader chose, as for `cat`, not a failure; writes are then dropped.
   */
  readonly readerGone?: boolean | undefined;
  /** A file: ends the writes and closes the temp file, leaving the rename to commit (many parts, few descriptors). */
  seal?: (() => Promise<void>) | undefined;
  /** Flushes and, for a file, renames the temp file into place. */
  commit(): Promise<void>;
  /** Drops the temp file (a stream is left as it is). Never throws. */
  abort(): Promise<void>;
}

export interface FileOutputOptions {
  /** Compress through gzip on the way to the temp file. */
  gzip?: boolean | undefined;
  /** Replace an existing file; otherwise an existing file is refused (output_exists) before any request. */
  overwrite?: boolean | undefined;
  /** The file's permission bits, whatever the umask; default 0600 (the owner alone). */
  mode?: number | undefined;
}

export async function openOutput(
  out: string | NodeJS.WritableStream,
  label = 'stream',
  options: FileOutputOptions = {},
): Promise<Output> {
  if (typeof out !== 'string') return streamOutput(out, label);
  await refuseUnusable(out, options.overwrite === true);
  const temp = tempBeside(out);
  // O_EXCL: never follow or reuse someone else's file at the temp name; 0600 whatever the umask.
  let fd: number;
  try {
    fd = createPrivate(temp);
  } catch (error) {
    throw new UsageError(`cannot write the export next to ${shownPath(out)}: ${(error as Error).message}`, 'output_unwritable', {
      cause: error,
    });
  }
  const file = createWriteStream(temp, { fd, autoClose: true });
  let failure: Error | undefined;
  file.on('error', (error) => {
    failure ??= error;
  });
  // With gzip the writes go to the compressor, which feeds the file (backpressure included).
  const gzip = options.gzip ? createGzip() : undefined;
  gzip?.on('error', (error) => {
    failure ??= error;
  });
  gzip?.pipe(file);
  const stream: NodeJS.WritableStream = gzip ?? file;
  const failed = (error: unknown) => outputFailed(temp, error);
  let done = false;
  let sealed = false;
  const seal = async () => {
    if (sealed) return;
    sealed = true;
    stream.end();
    await finished(file);
  };
  const output: Output = {
    target: out,
    bytes: 0,
    async seal() {
      try {
        if (failure) throw failure;
        await seal();
        if (failure) throw failure;
      } catch (error) {
        throw failed(error);
      }
    },
    async write(data) {
      if (failure) throw failed(failure);
      // Encoded once: counting the bytes and writing the string would encode it twice.
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      output.bytes += bytes.length;
      if (!stream.write(bytes)) await drained(stream).catch((error: unknown) => Promise.reject(failed(error)));
    },
    async commit() {
      try {
        if (failure) throw failure;
        await seal();
        if (failure) throw failure;
        // Shared only now, whole: nobody could open it while it was being written.
        if (options.mode !== undefined) await chmod(temp, options.mode);
        await rename(temp, out);
      } catch (error) {
        throw failed(error);
      }
      done = true;
    },
    async abort() {
      if (done) return;
      done = true;
      gzip?.destroy();
      file.destroy();
      await new Promise<void>((resolve) => (file.closed ? resolve() : file.once('close', () => resolve())));
      await unlink(temp).catch(() => {});
    },
  };
  return output;
}

/** A link, a directory or (unless replacing) a file at `out`: found now, not by the rename after the whole export. */
async function refuseUnusable(out: string, overwrite: boolean): Promise<void> {
  refuseLink(out);
  const found = await stat(out).catch(() => undefined);
  if (found?.isDirectory()) {
    throw new UsageError(`cannot write the export to ${out}: it is a directory (name a file in it)`, 'output_unwritable');
  }
  if (!overwrite && found !== undefined) {
    throw new UsageError(`${out} exists: an export never replaces a file silently; pass --overwrite, or name another file`, 'output_exists');
  }
}

/** The reader of a pipe went away (`| head -3`): EPIPE, or a write after the pipe was torn down. */
function isReaderGone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

/** What became of a stream: one listener per stream, however many exports write to it. */
interface StreamState {
  failure: Error | undefined;
  gone: boolean;
}
const streamStates = new WeakMap<NodeJS.WritableStream, StreamState>();

/**
 * The stream's state, listening from the first export on: the listener stays, as an EPIPE of a
 * write already queued can come after the export ended and must not crash the process.
 */
function stateOf(stream: NodeJS.WritableStream): StreamState {
  let state = streamStates.get(stream);
  if (state === undefined) {
    const created: StreamState = { failure: undefined, gone: false };
    stream.on('error', (error: Error) => {
      if (isReaderGone(error)) created.gone = true;
      else created.failure ??= error;
    });
    streamStates.set(stream, created);
    state = created;
  }
  return state;
}

function streamOutput(stream: NodeJS.WritableStream, label: string): Output {
  // EPIPE when the reader of `--out -` goes away ends the export quietly; any other error fails it, never a crash.
  const state = stateOf(stream);
  const check = () => {
    if (state.failure) throw outputFailed(label, state.failure);
  };
  const output: Output = {
    target: label,
    bytes: 0,
    get readerGone() {
      return state.gone;
    },
    async write(data) {
      check();
      if (state.gone) return;
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      output.bytes += bytes.length;
      if (!stream.write(bytes)) {
        await drained(stream).catch((error: unknown) => {
          if (isReaderGone(error) || state.gone) state.gone = true;
          else throw outputFailed(label, error);
        });
      }
      check();
    },
    async commit() {
      check();
    },
    async abort() {},
  };
  return output;
}

/** A write that failed (disk full, reader gone): the run failed, exit 1, not a crash. */
function outputFailed(where: string, error: unknown): OutputError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code ?? (error instanceof Error ? error.message : String(error));
  return new OutputError(`cannot write the export to ${where}: ${reason}`, { cause: error });
}

/** Resolves on 'drain'; rejects if the stream errors or closes first, so a write never hangs. */
export function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const onDrain = () => {
      cleanup();
      resolve();
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the output closed before the export ended'));
    };
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
