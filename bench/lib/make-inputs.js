/** Input files in the run's temp dir, made once per size: client CSVs and signed-body lists. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeBodies, writeClientsCsv, writeClientsXlsx } from './data.js';
import { BIN, cached, runNode, tempPath, timeoutFor } from './run-child.js';

export function dataset(ctx, rows) {
  return cached(ctx, `csv:${rows}`, () => {
    const path = join(ctx.tmp, `clients-${rows}.csv`);
    writeClientsCsv(path, rows);
    return path;
  });
}

/**
 * The same rows as dataset(ctx, rows), as an .xlsx written by exceljs with shared strings (as
 * Excel stores text): every name, e-mail and address a distinct shared string.
 */
export function xlsxDataset(ctx, rows) {
  return cached(ctx, `xlsx:${rows}`, async () => {
    const path = join(ctx.tmp, `clients-${rows}.xlsx`);
    await writeClientsXlsx(path, rows);
    return path;
  });
}

/** One wire body per line for the first `rows` rows, keyed as ccs-bulk keys them (via validate). */
export function bodies(ctx, rows) {
  return cached(ctx, `bodies:${rows}`, async () => {
    const results = tempPath(ctx, 'keys.results.csv');
    await runNode(ctx, BIN, ['validate', await dataset(ctx, rows), '--results', results, '--quiet'], {
      timeoutMs: timeoutFor(rows, 1000),
      label: 'validate (for keys)',
    });
    const path = join(ctx.tmp, `bodies-${rows}.jsonl`);
    const count = await writeBodies(results, path);
    rmSync(results, { force: true });
    if (count !== rows) throw new Error(`bodies: ${count} valid rows of ${rows}`);
    return path;
  });
}
