/** The pipeline's building blocks: results lines, block writes, line counting, the send window, progress. */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvRecord } from '../src/infra/csv-text.js';
import { BlockWriter } from '../src/infra/output-files.js';
import { LineCounter } from '../src/import/read/decode-chunks.js';
import { unescapeFormula } from '../src/import/row/normalize.js';
import { formatLine, RESULT_COLUMNS } from '../src/import/record/results.js';
import { createSendWindow, type SendWindow, signedBacklog } from '../src/import/send/send-window.js';
import { createProgress } from '../src/cli/progress.js';
import { type ProgressSnapshot, progressReporter } from '../src/infra/progress-report.js';
import { makeTempDir } from './helpers.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp.cleanup());

const cellText = fc.oneof(
  fc.string(),
  fc.constantFrom('a,b', '"q"', 'x\r\ny', 'line\nbreak', 'cr\r', '', '=1+1', "'=x", "''@y", '-5', '+1', '@SUM(A1)', '\tx', '\rx'),
);

describe('results lines', () => {
  it('read back as the cells they were made from (formula escape undone), whatever the cells hold', () => {
    fc.assert(
      fc.property(
        fc.record({
          row: fc.nat(),
          key: fc.option(cellText, { nil: undefined }),
          errorMessage: fc.option(cellText, { nil: undefined }),
          values: fc.array(cellText, { maxLength: 6 }),
        }),
        (line) => {
          const text = formatLine({ ...line, outcome: 'failed', httpStatus: 409, attempts: 2 });
          expect(text.endsWith('\n')).toBe(true);
          const [cells] = parse(text, { relax_column_count: true }) as string[][];
          // No cell a spreadsheet would run as a formula; import's unescape gives back the value.
          for (const cell of cells!) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
          expect(cells!.map(unescapeFormula)).toEqual([
            String(line.row),
            'failed',
            '',
            '409',
            '2',
            line.key ?? '',
            '',
            '',
            '',
            line.errorMessage ?? '',
            '',
            ...line.values,
          ]);
          expect(cells).toHaveLength(RESULT_COLUMNS.length + line.values.length);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('csvRecord quotes exactly the cells that need it, with the chosen line end', () => {
    expect(csvRecord(['a', 'b,c', 'say "hi"', 'x\ny', ''], '\r\n')).toBe('a,"b,c","say ""hi""","x\ny",\r\n');
    expect(csvRecord([], '\n')).toBe('\n');
  });
});

describe('BlockWriter', () => {
  it('writes every string whole and in order: small, multi-byte, and larger than a block', () => {
    const path = join(temp.dir, 'block.txt');
    const fd = openSync(path, 'w');
    const writer = new BlockWriter(fd, path);
    const parts: string[] = [];
    for (let i = 0; i < 5000; i++) parts.push(i % 7 === 0 ? `zoë €${i} 𝄞\n` : `line ${i}\n`);
    parts.splice(2500, 0, `${'é'.repeat(40_000)}\n`, `${'x'.repeat(70_000)}\n`);
    for (const part of parts) writer.write(part);
    writer.flush();
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe(parts.join(''));
  });
});

describe('LineCounter', () => {
  it('counts LF, CRLF (also split across chunks) and a lone CR as one line each', () => {
    const lines = new LineCounter();
    lines.advance(Buffer.from('a\nb\r'));
    expect(lines.line).toBe(3);
    lines.advance(Buffer.from('\nc\rd\n'));
    expect(lines.line).toBe(5);
    expect(lines.lineAt(Buffer.from('x\ny\nz'), 4)).toBe(7);
    const lf = new LineCounter();
    lf.advance(Buffer.from('1\n2\n3\n'));
    expect(lf.line).toBe(4);
  });
});

/** Feeds 40 rows through a window (signing takes a tick, the wire two); the most at once of each. */
async function busiest(window: SendWindow) {
  let signing = 0;
  let onWire = 0;
  let running = 0;
  const most = { signing: 0, wire: 0, running: 0 };
  const tick = () => new Promise((resolve) => setTimeout(resolve, 2));
  for (let row = 0; row < 40; row++) {
    await window.slot();
    running++;
    most.running = Math.max(most.running, running);
    window.run(async () => {
      await window.signing(async () => {
        most.signing = Math.max(most.signing, ++signing);
        await tick();
        signing--;
      });
      await window.wire(async () => {
        most.wire = Math.max(most.wire, ++onWire);
        await tick();
        await tick();
        onWire--;
      });
      running--;
    });
  }
  await window.drain();
  expect(running).toBe(0);
  return most;
}

describe('send window', () => {
  it('bounds the wire to `concurrency`, signing to `ahead`, and the reader to both', async () => {
    expect(await busiest(createSendWindow({ concurrency: 2, ahead: 3 }))).toEqual({ signing: 3, wire: 2, running: 5 });
  });

  it('while `auto` grows, up to `backlog` more rows wait signed for the wire; a fixed limit has none', async () => {
    // No answer is observed here, so `auto` is still growing (at its bound of 2).
    const growing = createSendWindow({ concurrency: 'auto', startConcurrency: 2, maxConcurrency: 2, ahead: 3, backlog: 6 });
    expect(await busiest(growing)).toEqual({ signing: 3, wire: 2, running: 11 });
    expect(await busiest(createSendWindow({ concurrency: 2, ahead: 3, backlog: 6 }))).toEqual({ signing: 3, wire: 2, running: 5 });
    // Once the service pushed back (a 429 closes a window of answers), the backlog is closed.
    const pushedBack = createSendWindow({ concurrency: 'auto', startConcurrency: 2, maxConcurrency: 2, ahead: 3, backlog: 6 });
    for (let i = 0; i < 4; i++) pushedBack.observe({ status: 429, ms: 5 });
    expect(pushedBack.limits().current).toBe(1);
    expect(await busiest(pushedBack)).toEqual({ signing: 3, wire: 1, running: 4 });
    // The import's: two seconds of one core's signing per core, at most 4,096 rows.
    expect([signedBacklog(2), signedBacklog(8), signedBacklog(64)]).toEqual([1024, 4096, 4096]);
  });
});

describe('send window --rate', () => {
  it('spaces what goes on the wire, also rows that waited, signed, behind a slow request', async () => {
    const window = createSendWindow({ concurrency: 1, ahead: 8, rate: 20 });
    const starts: number[] = [];
    const started = Date.now();
    for (let row = 0; row < 8; row++) {
      await window.slot();
      window.run(async () => {
        await window.signing(async () => {});
        await window.wire(async () => {
          starts.push(Date.now() - started);
          // The first request is slow: the others wait, signed, for the one wire slot.
          await new Promise((resolve) => setTimeout(resolve, starts.length === 1 ? 300 : 1));
        });
      });
    }
    await window.drain();
    expect(starts).toHaveLength(8);
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    // 50 ms apart at 20/s (a timer may fire a millisecond early).
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(45);
  });

  it('keeps sends apart when a busy event loop fires a wait late', async () => {
    const window = createSendWindow({ concurrency: 4, ahead: 4, rate: 20 });
    const starts: number[] = [];
    const started = Date.now();
    // The event loop is busy from 40 to 80 ms: the second send's wait ends late, at ~80 ms.
    setTimeout(() => {
      const until = Date.now() + 40;
      while (Date.now() < until);
    }, 40);
    for (let row = 0; row < 4; row++) {
      await window.slot();
      window.run(() => window.wire(async () => void starts.push(Date.now() - started)));
    }
    await window.drain();
    expect(starts).toHaveLength(4);
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    // The third waits from the second's actual start, not from when the second was due.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(45);
  });
});

describe('progress', () => {
  it('the library builds a snapshot only when one is due, however often it ticks, and always at the end', () => {
    const reported: ProgressSnapshot[] = [];
    let reads = 0;
    let i = 0;
    const reporter = progressReporter(
      (snapshot) => reported.push(snapshot),
      () => {
        reads++;
        return { done: i, counters: { valid: i } };
      },
      60_000,
    );
    for (; i < 100_000; i++) reporter.tick();
    expect(reads).toBeLessThanOrEqual(1);
    reporter.finish();
    expect(reported.at(-1)).toEqual({ done: 100_000, counters: { valid: 100_000 } });
    expect(reported.length).toBe(reads);
  });

  it('without onProgress nothing is built', () => {
    let reads = 0;
    const reporter = progressReporter(undefined, () => {
      reads++;
      return { done: 0, counters: {} };
    });
    reporter.tick();
    reporter.finish();
    expect(reads).toBe(0);
  });

  it('the command prints a plain line only when one is due, however often it is updated', () => {
    let written = '';
    const stream = { write: (text: string) => ((written += text), true), isTTY: false };
    const progress = createProgress({
      stream: stream as unknown as NodeJS.WritableStream,
      mode: 'lines',
      unit: 'rows',
      intervalMs: 60_000,
    });
    for (let i = 0; i < 100_000; i++) progress.update({ done: i, counters: { valid: i } });
    progress.stop();
    expect(written).toBe('');
  });
});
