/**
 * The run's created_at window, decided from the settings and the run's start instant before
 * anything is named or locked: a period (`--period`) resolved in its time zone, or the bounds as
 * given; a window that starts after the run's start is refused (it could only be empty). With
 * `--since-last` and a period, the window is the first ended period the state has not seen.
 */
import { UsageError } from '../errors.js';
import type { Client } from '../service/schemas.js';
import { loneMonth } from './created-bound.js';
import type { checkExportSettings } from './options.js';
import { inPeriod, type Period, periodAt, resolvePeriod, unitStart } from './period.js';
import { type ChainedPeriod, readState, type SinceLastState } from './since-last.js';
import { localText, zonedIso } from './time-zone.js';

type CheckedSettings = ReturnType<typeof checkExportSettings>;

export interface RunWindow {
  /** The period this run's file holds, if any (named by `{period}`). */
  period: Period | undefined;
  /** A period report: the period to export now, or what the last run exported when no period ended since. */
  chained: ChainedPeriod | UpToDate | undefined;
  /** The bounds to send when not incremental (undefined `createdTo`: pinned to the start). */
  createdFrom: string | undefined;
  createdTo: string | undefined;
  /** A period's clients only, by their own created_at (bounds are sent in whole seconds). */
  select: ((clients: readonly Client[]) => Client[]) | undefined;
}

/** A period report with no period ended since its last run. */
export interface UpToDate {
  upToDate: true;
  /** The last run's file, and the state's bound (the next period's start). */
  lastOut: string;
  bound: string;
  /** The next period and when it ends, on the zone's clocks. */
  next: string;
  nextEnd: string;
}

export interface WindowInput {
  sinceLast?: string | undefined;
  out: string | NodeJS.WritableStream;
}

export async function planWindow(input: WindowInput, settings: CheckedSettings, started: Date): Promise<RunWindow> {
  const now = started.getTime();
  if (settings.period !== undefined && input.sinceLast !== undefined) {
    const chained = chainPeriod(input.sinceLast, await readState(input.sinceLast), settings.period, settings.timeZone, now);
    // Each period in its own file: one name for all would hold two, or replace the last.
    if (typeof input.out === 'string' && !input.out.includes('{period}')) {
      throw new UsageError(`--out ${input.out}: a report by period writes one file per period: put {period} in the name`, 'bad_option');
    }
    const period = 'upToDate' in chained ? undefined : chained.period;
    return { period, chained, createdFrom: undefined, createdTo: undefined, select: undefined };
  }
  if (settings.createdFromMonth !== undefined && input.sinceLast === undefined) throw loneMonth(settings.createdFromMonth);
  if (settings.period === undefined) {
    if (settings.createdFrom !== undefined && settings.createdTo === undefined && Date.parse(settings.createdFrom) > now) {
      throw afterNow(`--created-from starts at ${settings.createdFrom}`, now);
    }
    return { period: undefined, chained: undefined, createdFrom: settings.createdFrom, createdTo: settings.createdTo, select: undefined };
  }
  const period = resolvePeriod(settings.period, now, settings.timeZone);
  if (period.fromMs > now) throw afterNow(`--period ${period.name} starts ${localText(period.fromMs, period.zone)} ${period.zone}`, now);
  // A period not over yet ends, as any open window, at the run's start.
  const ended = period.endMs <= now;
  return {
    period,
    chained: undefined,
    createdFrom: new Date(period.fromMs).toISOString(),
    createdTo: ended ? new Date(period.endMs).toISOString() : started.toISOString(),
    select: ended ? inPeriod(period) : undefined,
  };
}

function afterNow(what: string, now: number): UsageError {
  return new UsageError(
    `${what}, after now (${new Date(now).toISOString()}): no client can be in it yet; give a start in the past`,
    'bad_option',
  );
}

/** The periods a scheduled report chains: whole units, counted back from the run. */
const CHAINED = ['previous-day', 'previous-week', 'previous-month'];

/**
 * The first ended period after the state's bound (the first run: the previous one), and whether
 * more ended after it; 'up-to-date' when none did (the report ran twice in one period).
 */
export function chainPeriod(
  path: string,
  state: SinceLastState | undefined,
  name: string,
  zone: string,
  now: number,
): ChainedPeriod | UpToDate {
  if (!CHAINED.includes(name)) {
    throw new UsageError(
      `--period ${name} with --since-last: a scheduled report exports whole periods counted back from each run: ${CHAINED.join(', ')}`,
      'bad_option',
    );
  }
  const last = resolvePeriod(name, now, zone);
  if (state === undefined) return { period: last, more: false };
  const made = state.period;
  if (made?.name !== name || made.zone !== zone) {
    const show = (period: { name: string; zone: string } | undefined) => (period ? `--period ${period.name} in ${period.zone}` : 'no period');
    throw new UsageError(
      `the state file ${path} was made with ${show(made)}, not ${show({ name, zone })}: use one state file per report`,
      'state_mismatch',
    );
  }
  const bound = Date.parse(state.bound);
  const unit = last.unit!;
  if (unitStart(unit, bound, zone) !== bound) {
    throw new UsageError(`the state file ${path} has a bound (${state.bound}) that starts no ${unit} in ${zone}: restore it, or delete it to start again`, 'state_invalid');
  }
  const period = periodAt(unit, bound, zone, name);
  if (bound >= last.endMs) {
    return { upToDate: true, lastOut: state.last.out, bound: state.bound, next: period.label, nextEnd: `${localText(period.endMs, zone)} ${zone}` };
  }
  return { period, more: period.endMs < last.endMs };
}

/** The client with created_at as the zone's clocks showed it, offset included (--dates-in-timezone). */
export function datesIn(zone: string): (client: Client) => Client {
  return (client) => {
    const ms = Date.parse(client.created_at ?? '');
    return Number.isNaN(ms) ? client : { ...client, created_at: zonedIso(ms, zone) };
  };
}

/** A period as the summary shows it. */
export interface PeriodSummary {
  /** As given: `previous-month`, `2026-02`. */
  name: string;
  /** What it covers: `2026-02`, `2026-W07`, `2026-02-14`, `2026-02-07_2026-02-13`. */
  label: string;
  /** Its IANA time zone. */
  zone: string;
  /** First instant (ISO, UTC). */
  from: string;
  /** First instant after it (ISO, UTC): excluded. */
  end: string;
  /** The first instant on the zone's clocks (`2026-03-01 00:00`). */
  fromLocal: string;
  /** The end on the zone's clocks (`2026-04-01 00:00`), excluded. */
  endLocal: string;
  /** False for a period not over at the run's start (`month-to-date`, this month): the window ends at the start instead. */
  ended: boolean;
}

/** The plan's period for the summary, if it has one. */
export function periodSummary(plan: { started: Date; window: RunWindow }): PeriodSummary | undefined {
  const period = plan.window.period;
  if (period === undefined) return undefined;
  return {
    name: period.name,
    label: period.label,
    zone: period.zone,
    from: new Date(period.fromMs).toISOString(),
    end: new Date(period.endMs).toISOString(),
    fromLocal: localText(period.fromMs, period.zone),
    endLocal: localText(period.endMs, period.zone),
    ended: period.endMs <= plan.started.getTime(),
  };
}

/**
 * What a new report's first run says once: `--since-last` with a status filter reads each
 * client's status *now*, within a window of creation dates, so a client whose status changes
 * into the filter after its window was exported is in no report.
 */
export function firstWarnings(
  plan: { incremental: { summary(): { mode: string; resumed: boolean } } | undefined },
  settings: Pick<CheckedSettings, 'status' | 'creditStatus'>,
): string[] {
  const incremental = plan.incremental?.summary();
  if (incremental?.mode !== 'since-last' || incremental.resumed) return [];
  if (settings.status === undefined && settings.creditStatus === undefined) return [];
  return [
    'since-last lists the clients created in each window with the status they have when it runs: a client whose status ' +
      'or credit status changes into the filter later is in no report; for "clients that became approved", use --new-since-last',
  ];
}
