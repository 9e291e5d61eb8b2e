/**
 * A period report run again before another period ended (a retried cron job, a second run on
 * the 1st): nothing is written, the state is left as it is, and the summary says which period
 * was the last one exported, where, and when the next one ends.
 */
import type { CheckedSettings, ExportPlan } from './plan.js';
import { newPagingStats } from './page.js';
import { type ExportSummary, summarize } from './summary.js';
import type { UpToDate } from './window.js';

export function summarizeUpToDate(plan: ExportPlan, settings: CheckedSettings, state: string, last: UpToDate): ExportSummary {
  const figures = { pagesExpected: 0, pagesReceived: 0, received: 0, duplicates: 0, skipped: 0, written: 0 };
  const run = {
    target: last.lastOut,
    rows: 0,
    bytes: 0,
    stats: newPagingStats(settings.pageSize),
    prefetch: { mode: 'fixed' as const, current: 0, settled: 0, max: 0 },
    counts: {},
    account: figures,
    elapsedMs: 0,
  };
  const summary = summarize(plan, settings, run);
  return {
    ...summary,
    incremental: {
      mode: 'since-last',
      state,
      resumed: true,
      previousBound: last.bound,
      skippedAtBound: 0,
      upToDate: { lastOut: last.lastOut, next: last.next, nextEnd: last.nextEnd },
    },
  };
}
