/** File-bound runs: validate vs a bare csv-parse pass, export vs a bare paging loop. */
import { rmSync } from 'node:fs';
import { dataset, xlsxDataset } from './make-inputs.js';
import {
  BIN,
  cached,
  child,
  foreignCores,
  lastJson,
  outcome,
  runNode,
  tempPath,
  timeoutFor,
  withSandbox,
} from './run-child.js';

/**
 * `ccs-bulk validate` of `rows` rows (reading, mapping, checks, keys, results file), as CSV or
 * .xlsx; `round` > 1 measures again (the validate part's alternating rounds).
 */
export function validateRun(ctx, rows, format = 'csv', round = 1) {
  return cached(ctx, `validate:${format}:${rows}${round > 1 ? `:${round}` : ''}`, async () => {
    const input = format === 'xlsx' ? await xlsxDataset(ctx, rows) : await dataset(ctx, rows);
    const results = tempPath(ctx, 'validate.results.csv');
    try {
      ctx.log(`  validate ${rows} rows (${format})…`);
      const result = await runNode(ctx, BIN, ['validate', input, '--results', results, '--quiet', '--json'], {
        timeoutMs: timeoutFor(rows, 2000),
        label: 'ccs-bulk validate',
        tool: true,
      });
      const summary = lastJson(result.stdout, 'ccs-bulk validate');
      if (summary.counts.valid !== rows) throw new Error(`validate: ${summary.counts.valid} of ${rows} valid`);
      const run = outcome(result, summary, rows);
      ctx.log(`    ${Math.round(run.rowsPerSecond)} rows/s, peak RSS ${run.maxRssMb?.toFixed(0)} MB`);
      return run;
    } finally {
      rmSync(results, { force: true });
    }
  });
}

/** The bare csv-parse pass over the same file; `round` as validateRun's. */
export function parseRun(ctx, rows, round = 1) {
  return cached(ctx, `parse:${rows}${round > 1 ? `:${round}` : ''}`, async () => {
    ctx.log(`  bare csv-parse ${rows} rows…`);
    const result = await runNode(ctx, child('parse-csv'), [await dataset(ctx, rows)], {
      timeoutMs: timeoutFor(rows, 10_000),
      label: 'csv-parse',
    });
    const run = {
      ...lastJson(result.stdout, 'csv-parse'),
      cpuS: result.cpuS,
      maxRssMb: result.maxRssMb,
      foreignCores: foreignCores(result),
    };
    if (run.rows !== rows) throw new Error(`csv-parse: ${run.rows} of ${rows} rows`);
    ctx.log(`    ${Math.round(run.rowsPerSecond)} rows/s`);
    return run;
  });
}

// The same seed gives the same clients: each run gets its own, identical, sandbox.
const PAGE_SIZE = 100;
const PREFETCH = 4;

/**
 * `ccs-bulk export` of a sandbox seeded with `clients` (page size 100, 4 pages ahead: pinned, as
 * the bare loop's, rather than the default `auto`), to CSV or to an xlsx report.
 */
export function exportRun(ctx, clients, format = 'csv') {
  return cached(ctx, format === 'csv' ? `export:${clients}` : `export-${format}:${clients}`, () =>
    withSandbox(ctx, { seed: clients }, async (service) => {
      ctx.log(`  export ${clients} clients to ${format}…`);
      const out = tempPath(ctx, `export.${format}`);
      const args = ['export', '--out', out, '--format', format, '--quiet', '--json'];
      args.push('--page-size', String(PAGE_SIZE), '--prefetch', String(PREFETCH));
      const result = await runNode(ctx, BIN, args, {
        env: { CCS_BASE_URL: service.url, CCS_TOKEN: service.token },
        timeoutMs: timeoutFor(clients, 500),
        label: 'ccs-bulk export',
        tool: true,
      });
      rmSync(out, { force: true });
      const summary = lastJson(result.stdout, 'ccs-bulk export');
      if (summary.rows !== clients) throw new Error(`export: ${summary.rows} of ${clients} clients`);
      const run = outcome(result, summary, clients);
      ctx.log(`    ${Math.round(run.rowsPerSecond)} rows/s, peak RSS ${run.maxRssMb?.toFixed(0)} MB`);
      return { result, summary: run };
    }),
  );
}

/** The bare paging loop + csv-stringify over an identically seeded sandbox. */
export function pagingRun(ctx, clients) {
  return cached(ctx, `paging:${clients}`, () =>
    withSandbox(ctx, { seed: clients }, async (service) => {
      ctx.log(`  bare paging loop + csv-stringify, ${clients} clients…`);
      const out = tempPath(ctx, 'paged.csv');
      const options = {
        url: service.url,
        token: service.token,
        out,
        pageSize: PAGE_SIZE,
        prefetch: PREFETCH,
        maxPages: Math.ceil(clients / PAGE_SIZE) + 2,
        timeoutMs: timeoutFor(clients, 500),
      };
      const result = await runNode(ctx, child('page-clients'), [JSON.stringify(options)], {
        timeoutMs: options.timeoutMs + 10_000,
        label: 'bare paging loop',
      });
      rmSync(out, { force: true });
      const summary = { ...lastJson(result.stdout, 'paging loop'), cpuS: result.cpuS, maxRssMb: result.maxRssMb };
      if (summary.rows !== clients) throw new Error(`paging loop: ${summary.rows} of ${clients}`);
      ctx.log(`    ${Math.round(summary.rowsPerSecond)} rows/s`);
      return { result, summary };
    }),
  );
}
