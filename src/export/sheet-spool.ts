/**
 * The sheets of a split workbook (`--split month|status|rows:N`, or sheets past a full one): its fixed parts name every
 * sheet and must come first in the zip (exceljs reads entries in order), and statuses
 * interleave, so each sheet's XML goes to a private temp file (gzip, fastest level: a few
 * bytes a row) while the export pages, and the sheets are copied into the workbook one after
 * the other at the end. Disk, not memory, holds them; the temps sit beside the report (or in
 * the system's temp folder for a stream).
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import { OutputError } from '../errors.js';
import { createPrivate } from '../infra/output-files.js';
import { tempBeside } from '../infra/temp-files.js';
import { drained, type Output } from './output.js';
import type { WorkbookOutput } from './xlsx-package.js';

export interface SheetSpool {
  /** The temp sheet of `key`, as an Output (commit is the spool's). */
  sheet(key: string): Output;
  owns(output: Output): boolean;
  /**
   * Each part's sheet, in the order given, into the workbook (made for these sheets); the temps
   * removed. `afterWritten`: the workbook's sheet being written is already full, so the first starts a next one.
   */
  copyInto(workbook: WorkbookOutput, keys: readonly string[], afterWritten?: boolean): Promise<void>;
  abort(): Promise<void>;
}

interface Spooled {
  path: string;
  stream: WriteStream;
  gzip: Gzip;
  output: Output;
}

export function openSheetSpool(beside: string | undefined): SheetSpool {
  const sheets = new Map<string, Spooled>();
  const outputs = new Set<Output>();
  const near = beside ?? join(tmpdir(), 'ccs-bulk-sheet');
  return {
    sheet(key) {
      const path = tempBeside(near);
      const stream = createWriteStream(path, { fd: createPrivate(path), autoClose: true });
      const gzip = createGzip({ level: 1 });
      gzip.pipe(stream);
      let failure: Error | undefined;
      const onError = (error: Error) => {
        failure ??= error;
      };
      stream.on('error', onError);
      gzip.on('error', onError);
      const fail = (error: unknown) => new OutputError(`cannot write a temp sheet beside ${near}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
      const output: Output = {
        target: path,
        bytes: 0,
        async write(data) {
          if (failure) throw fail(failure);
          if (!gzip.write(data)) await drained(gzip).catch((error: unknown) => Promise.reject(fail(failure ?? error)));
        },
        async seal() {
          if (!gzip.writableEnded) gzip.end();
          await finished(stream).catch((error: unknown) => Promise.reject(fail(error)));
        },
        async commit() {},
        async abort() {},
      };
      sheets.set(key, { path, stream, gzip, output });
      outputs.add(output);
      return output;
    },
    owns: (output) => outputs.has(output),
    async copyInto(workbook, keys, afterWritten = false) {
      for (const [i, key] of keys.entries()) {
        const spooled = sheets.get(key)!;
        await spooled.output.seal?.();
        if (i > 0 || afterWritten) await workbook.nextSheet();
        const unzipped = createReadStream(spooled.path).pipe(createGunzip());
        for await (const chunk of unzipped as AsyncIterable<Buffer>) await workbook.write(chunk);
        await unlink(spooled.path).catch(() => {});
        sheets.delete(key);
      }
    },
    async abort() {
      for (const { path, stream, gzip } of sheets.values()) {
        gzip.destroy();
        stream.destroy();
        await unlink(path).catch(() => {});
      }
      sheets.clear();
    },
  };
}
