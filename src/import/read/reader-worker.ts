/**
 * The reader thread's entry (see reader-thread.ts): opens the CSV file or .xlsx sheet, sends
 * its header, then a batch per chunk while the other thread has asked for them, and ends after
 * the last one, an error, or a close.
 */
import { workerData } from 'node:worker_threads';
import {
  BATCHES_AHEAD,
  type FromWorker,
  packBatch,
  sendableError,
  type ToWorker,
  transferOf,
  type WorkerInput,
} from './reader-thread.js';
import { openCsv } from './read-csv.js';
import type { RowSource } from './types.js';

const input = workerData as WorkerInput | undefined;
if (input?.port === undefined) throw new Error('reader-worker.js runs as a worker thread');
const { port } = input;

let wanted = BATCHES_AHEAD;
let closing = false;
let wake: (() => void) | undefined;
port.on('message', (message: ToWorker) => {
  if (message.type === 'more') wanted++;
  else closing = true;
  wake?.();
});
const send = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

async function run({ inspected, options }: WorkerInput): Promise<void> {
  let source: RowSource;
  try {
    // The .xlsx reader's modules (unzip, XML) only for an .xlsx: a CSV thread stays smaller.
    const open = inspected.format === 'xlsx' ? (await import('./read-xlsx.js')).openXlsx : openCsv;
    source = await open(inspected, options);
  } catch (error) {
    send({ type: 'error', error: sendableError(error) });
    return;
  }
  send({ type: 'open', info: source.info, headers: source.headers });
  try {
    // Ahead of the consumer, this thread makes the results lines' cells (reader-thread.ts):
    // from a batch it finds no credit to send, until one the consumer has all its credit back.
    let ahead = false;
    for await (const batch of source.batches) {
      if (wanted === 0) ahead = true;
      else if (wanted === BATCHES_AHEAD) ahead = false;
      while (wanted === 0 && !closing) await new Promise<void>((resolve) => (wake = resolve));
      if (closing) return;
      wanted--;
      const packed = packBatch(batch, { mayHoldNul: inspected.format !== 'csv', echo: ahead });
      send({ type: 'batch', ...packed, bytesRead: source.bytesRead() }, transferOf(packed));
    }
    send({ type: 'end', bytesRead: source.bytesRead() });
  } catch (error) {
    send({ type: 'error', error: sendableError(error) });
  } finally {
    await source.close();
  }
}

await run(input);
// Nothing more to say or hear: closing the port lets the thread end (messages sent are delivered).
port.close();
