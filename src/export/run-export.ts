/**
 * The export pipeline: plan → page → flatten → escape → write → account. Settings are checked
 * and the plan made (plan.ts) before the first request; then pages stream through, one at a
 * time, into the output, which is committed (renamed into place) only when the last page is
 * written and the run's account holds (account.ts); the incremental state moves only then.
 */

import { CallbackGuard } from '../infra/callbacks.js';
import { toLibraryWords } from '../infra/library-words.js';
import { type OnProgress, progressReporter } from '../infra/progress-report.js';
import { createAdaptiveLimit } from '../service/adaptive-limit.js';
import type { ServiceClient } from '../service/client.js';
import { createWireSlots } from '../service/wire-slots.js';
import { type PaceMemory, paceMemoryFor, recall, remember, rememberedStart } from '../service/pace-memory.js';
import type { FileLock } from '../infra/lock.js';
import { ExportAccount } from './account.js';
import { flattenClient } from './columns.js';
import { EXPORT_DEFAULTS } from './defaults.js';
import { keepCountries } from './country-filter.js';
import { checkExportSettings, type ExportSettings } from './options.js';
import { busyPrefetch, newPagingStats, pageClients, pagesAhead } from './page.js';
import { type CheckedSettings, type ExportPlan, type PlanInput, planExport } from './plan.js';
import { type ExportSummary, reportFacts, reportFigures, type RunFigures, summarize } from './summary.js';
import { summarizeUpToDate } from './up-to-date.js';
import { ReportWriter } from './report-writer.js';

export type { ExportSummary, IncrementalSummary } from './summary.js';

/** What to export, where to, and how: the filters and format (`ExportSettings`), the service, the output. */
export interface ExportClientsOptions extends ExportSettings, PlanInput {
  /** The service client to list the clients with (`createServiceClient`); the caller closes it. */
  service: ServiceClient;
  /** A file path (written via a temp file, renamed on success), or a stream (written, not ended). */
  out: string | NodeJS.WritableStream;
  /**
   * Where `prefetch: 'auto'` keeps its pace between runs: by default a private file per service
   * in the user's cache folder (the next export starts at half of where this one settled);
   * `false`, none. A fixed `prefetch` neither reads nor writes it.
   */
  paceMemory?: PaceMemory | false | undefined;
  /** Aborting stops the export; a file output is then not created. */
  signal?: AbortSignal | undefined;
  /** Progress as data: a snapshot at most every `progressIntervalMs` (default 100), and at the end. */
  onProgress?: OnProgress | undefined;
  /** The least time between two `onProgress` snapshots, in milliseconds; default 100. */
  progressIntervalMs?: number | undefined;
  /** The export's start instant (the pinned upper bound); tests fix it. Default: now. */
  now?: (() => Date) | undefined;
  /**
   * A state file: export only clients created since the previous successful run's bound, then
   * record the new bound (only once the output is in place). Needs a file `out`, no createdTo.
   */
  sinceLast?: string | undefined;
  /**
   * A state file: export the clients that entered the filter (new, or whose status changed into
   * it) since the previous successful run, then record their ids. Needs a file `out`.
   */
  newSinceLast?: string | undefined;
  /** Replace an existing output file (default: refuse it, output_exists). */
  overwrite?: boolean | undefined;
  /** gzip the file (also when its name ends in .gz). */
  gzip?: boolean | undefined;
  /** The file's permission bits (e.g. 0o640); default: 0666 less the umask, like any new file. */
  fileMode?: number | undefined;
  /** The report's name, for `{report}` in `out`. */
  report?: string | undefined;
  /** Called with the temp files of dead runs removed beside the output and state files. */
  onStaleTemps?: ((removed: string[]) => void) | undefined;
  /**
   * Called for a lock file found beside an output that was not believed (not one ccs-bulk writes,
   * or another user's that cannot be checked) and was replaced: its path, and why.
   */
  onLockReplaced?: ((path: string, why: string) => void) | undefined;
  /** Called once the plan is made, before the first request: the output's filled-in name. */
  onPlan?:
    | ((plan: {
        /** The output file, its placeholders filled in; `stream` for a stream. */
        out: string;
        /** An existing file will be replaced (`overwrite`) once the export succeeds. */
        replaces: boolean;
      }) => void)
    | undefined;
}

/**
 * Exports the service's clients to a file or stream, page by page, from one consistent
 * snapshot. Resolves with the summary once the output is complete and in place; rejects with a
 * typed error (AuthError, ConnectionError, OutageError, StoppedError for an abort…) and leaves
 * no partial output, or with a callback's own error when one threw. Locks and files are
 * released before it settles.
 */
export async function exportClients(options: ExportClientsOptions): Promise<ExportSummary> {
  const guard = new CallbackGuard();
  try {
    const summary = await runExportClients({
      ...options,
      signal: guard.join(options.signal),
      onProgress: guard.wrap(options.onProgress),
      onStaleTemps: guard.wrap(options.onStaleTemps),
      onLockReplaced: guard.wrap(options.onLockReplaced),
      onPlan: guard.wrap(options.onPlan),
    });
    guard.rethrow();
    return summary;
  } catch (error) {
    guard.rethrow();
    throw toLibraryWords(error);
  }
}

/** exportClients for the CLI: its callbacks are its own, and its messages name flags. */
export async function runExportClients(options: ExportClientsOptions): Promise<ExportSummary> {
  const settings = checkExportSettings(options, 'library', typeof options.out === 'string' ? options.out : undefined);
  if (options.out === '-')
    throw new TypeError("exportClients: pass a writable stream (stdout, say), not '-'");
  // A period report goes on while periods it missed wait, each to its own file, the state saved after each.
  const earlier: ExportSummary[] = [];
  for (;;) {
    const summary = await exportOnce(options, settings);
    if (summary.incremental?.period?.more !== true) return earlier.length === 0 ? summary : { ...summary, earlierPeriods: earlier };
    earlier.push(summary);
  }
}

/** One output: planned, written, committed, its state saved. */
async function exportOnce(options: ExportClientsOptions, settings: CheckedSettings): Promise<ExportSummary> {
  const locks: FileLock[] = [];
  try {
    const plan = await planExport(options, settings, locks);
    if (plan.window.chained && 'upToDate' in plan.window.chained) return summarizeUpToDate(plan, settings, options.sinceLast!, plan.window.chained);
    for (const lock of locks) if (lock.replaced !== undefined) options.onLockReplaced?.(lock.path, lock.replaced);
    options.onPlan?.({ out: typeof plan.out === 'string' ? plan.out : 'stream', replaces: plan.replaces });
    const target = { out: plan.out, gzip: plan.gzip, overwrite: options.overwrite, fileMode: options.fileMode };
    const output = await ReportWriter.open(settings, target, settings.timeZone);
    const run = await writePages(options, settings, plan, output);
    // Only now, with the output in place: a failed or killed run leaves the old state.
    await plan.incremental?.save(run.target, run.rows);
    return summarize(plan, settings, run, options.fileMode);
  } finally {
    for (const lock of locks) lock.release();
  }
}

/** Pages answered before a run's settled prefetch is worth remembering. */
const REMEMBERED_ANSWERS = 500;

/** Pages in, rows out; commits the output once the account holds, aborts it otherwise. */
async function writePages(
  options: ExportClientsOptions,
  settings: CheckedSettings,
  plan: ExportPlan,
  output: ReportWriter,
): Promise<RunFigures> {
  const clock = Date.now();
  const keep = keepCountries(settings.country);
  const stats = newPagingStats(settings.pageSize);
  const account = new ExportAccount();
  // `--prefetch auto` starts near where the last export from this service settled (pace memory).
  const memory = settings.prefetch === 'auto' && options.paceMemory !== false ? (options.paceMemory ?? paceMemoryFor(options.service.baseUrl)) : undefined;
  const start = rememberedStart(memory && recall(memory, 'export'), EXPORT_DEFAULTS.startPrefetch, settings.maxPrefetch);
  const prefetch = createAdaptiveLimit({ limit: settings.prefetch, start, max: settings.maxPrefetch });
  const wire = createWireSlots(prefetch.current);
  let rows = 0;
  const progress = progressReporter(
    options.onProgress,
    () => ({ done: rows, counters: { pages: stats.pages, prefetch: prefetch.current } }),
    options.progressIntervalMs,
  );
  // This answer's request still holds its place on the wire: as many await an answer.
  const unwatch = options.service.watchAnswers((answer) => {
    prefetch.observe(answer, busyPrefetch(stats, wire), { awaiting: wire.held });
    wire.limit = prefetch.current;
  });
  try {
    const pagesIn = pageClients(
      {
        service: options.service,
        filters: plan.filters,
        pageSize: settings.pageSize,
        prefetch: () => pagesAhead(prefetch.current, settings.prefetch === 'auto', settings.maxPrefetch),
        wire,
        signal: options.signal,
        slim: plan.incremental?.slim,
      },
      stats,
    );
    for await (const page of pagesIn) {
      const selected = plan.select(page.clients);
      const clients = keep ? keep(selected) : selected;
      account.page(page, clients.length);
      if (clients.length === 0) continue;
      const flat = clients.map(flattenClient);
      await output.write(flat);
      account.wrote(flat.length);
      rows += clients.length;
      progress.tick();
      // The reader of a pipe closed it (`| head`): its choice, as for `cat`; the rest is not paged.
      if (output.readerGone) break;
    }
    const figures = output.readerGone ? account.figures(stats) : account.check(stats, rows);
    const report = await output.commit(reportFacts(plan, settings, options.report));
    // A run of a few pages says little of where a long one settles.
    if (memory !== undefined && prefetch.answered >= REMEMBERED_ANSWERS) {
      remember(memory, 'export', { settled: prefetch.limits().settled, throttled: prefetch.throttled, at: new Date().toISOString() });
    }
    const elapsedMs = Date.now() - clock;
    return { ...reportFigures(report, output.readerGone), rows, stats, prefetch: prefetch.limits(), account: figures, elapsedMs };
  } catch (error) {
    await output.abort();
    throw error;
  } finally {
    unwatch();
    progress.finish();
  }
}
