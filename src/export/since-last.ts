/**
 * Incremental exports (`--since-last STATE`): the state file remembers the previous successful
 * run's upper bound and the clients it wrote near that bound. The next run asks for
 * `created_at.from = bound` (inclusive, so nothing created at the bound is lost) and drops the
 * ids already written (so nothing there is written twice). "Near" is the bound's whole second
 * and the second before it: the service's time precision and rounding are unknown, so a
 * service that compares in seconds, or rounds, still never repeats a client. The state is
 * replaced (temp file, then rename) only after the output was committed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import type { Client } from '../service/schemas.js';
import { checkStateFilters, type IncrementalRun, stateFilters } from './incremental.js';
import { openState, replaceState } from './state-file.js';
import { inPeriod, type Period } from './period.js';

const STATE_VERSION = 1;

const seenSchema = z.object({ id: z.string(), created_at: z.string() });

const stateSchema = z.object({
  version: z.literal(STATE_VERSION),
  /** The previous run's `created_at.to`, exactly as sent; with a period, the next period's start. */
  bound: z.string(),
  /** A calendar-aligned report: each run exports the whole periods ended since the bound, one file each. */
  period: z.object({ name: z.string(), zone: z.string() }).optional(),
  /** Clients written by earlier runs whose created_at is within NEAR_MS below the bound's second. */
  near: z.array(seenSchema),
  /** The filters the state was made with: another filter would need another window. */
  filters: z.object({
    status: z.array(z.string()).nullable(),
    creditStatus: z.array(z.string()).nullable(),
  }),
  /**
   * The last run's file and its window's start (`from`, null for "from the beginning") with the
   * ids it skipped there: enough to export that window again when its file is replaced.
   */
  last: z.object({
    out: z.string(),
    rows: z.number(),
    finishedAt: z.string(),
    from: z.string().nullable().optional(),
    skipAtFrom: z.array(seenSchema).optional(),
  }),
});

export type SinceLastState = z.infer<typeof stateSchema>;
export type SeenClient = z.infer<typeof seenSchema>;

/** One second below the bound's second: covers a service that rounds instead of truncating. */
const NEAR_MS = 1000;

/** The state, or undefined before the first run. A damaged state is exit 2, never a silent full export. */
export async function readState(path: string): Promise<SinceLastState | undefined> {
  const text = await openState(path, (at) => readFile(at, 'utf8'));
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`the state file ${path} is not JSON: restore it, or delete it to export everything again`, 'state_invalid');
  }
  const parsed = stateSchema.safeParse(json);
  if (!parsed.success || Number.isNaN(Date.parse(parsed.data.bound))) {
    const issue = parsed.success ? { path: ['bound'] } : parsed.error.issues[0];
    throw new UsageError(
      `the state file ${path} is not a ccs-bulk export state (${issue?.path.join('.') || 'content'}): restore it, or delete it to export everything again`,
      'state_invalid',
    );
  }
  return parsed.data;
}

/** Collects the clients written near the new bound, to be skipped by the next run. */
export class NearBound {
  readonly #fromMs: number;
  readonly #seen = new Map<string, string>();

  constructor(bound: string) {
    const ms = Date.parse(bound);
    this.#fromMs = ms - (((ms % 1000) + 1000) % 1000) - NEAR_MS;
  }

  /** Earlier runs' near clients that are still near the new bound are carried over. */
  carry(previous: readonly SeenClient[]): void {
    for (const client of previous) this.add(client.id, client.created_at);
  }

  add(id: string, createdAt: string): void {
    const ms = Date.parse(createdAt);
    // A created_at the exporter cannot read is kept: skipping it again costs nothing.
    if (Number.isNaN(ms) || ms >= this.#fromMs) this.#seen.set(id, createdAt);
  }

  list(): SeenClient[] {
    return [...this.#seen].map(([id, created_at]) => ({ id, created_at }));
  }
}

/** Replaces the state atomically: a crash leaves the old state or the new one, never half. */
export async function writeState(path: string, state: SinceLastState): Promise<void> {
  const write = (temp: string) => writeFile(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  await replaceState(path, write, 'the next run repeats this window');
}

export interface SinceLastSettings {
  status: readonly string[] | undefined;
  creditStatus: readonly string[] | undefined;
  createdFrom: string | undefined;
}

/** A period report's window for this run: the first period not exported yet (planned in period-chain.ts). */
export interface ChainedPeriod {
  period: Period;
  /** More ended periods wait after this one: the run goes on with them, each to its own file. */
  more: boolean;
}

/**
 * The run's window: from the last bound (skipping the ids written at it) to `started`; or, when
 * the last run's file is replaced, from that run's own start, so its clients are written again.
 */
export function startSinceLast(
  path: string,
  state: SinceLastState | undefined,
  settings: SinceLastSettings,
  started: Date,
  replay: boolean,
  chained?: ChainedPeriod,
): IncrementalRun {
  const filters = stateFilters(settings.status, settings.creditStatus);
  if (state) checkStateFilters(path, state.filters, filters);
  if (chained) return startPeriod(path, state, filters, chained, replay);
  if (state?.period) {
    throw new UsageError(
      `the state file ${path} was made with --period ${state.period.name} in ${state.period.zone}, not without a period: use one state file per report`,
      'state_mismatch',
    );
  }
  if (replay && state && (state.last.from === undefined || state.last.skipAtFrom === undefined)) {
    throw new UsageError(
      `${state.last.out} is the last output of ${path}, written by an older ccs-bulk that did not record its window: ` +
        'move the file away (the next run exports only the new clients), or name another file',
      'output_exists',
    );
  }
  let createdTo = started.toISOString();
  // A clock set back since the last run: keep the old bound rather than send from > to.
  if (state && state.bound > createdTo) createdTo = state.bound;
  const createdFrom = !state ? settings.createdFrom : replay ? (state.last.from ?? undefined) : state.bound;
  const skipList = !state ? [] : replay ? (state.last.skipAtFrom ?? []) : state.near;
  const skip = new Set(skipList.map((client) => client.id));
  const near = new NearBound(createdTo);
  near.carry(skipList);
  let skipped = 0;
  return {
    createdFrom,
    createdTo,
    select(clients: readonly Client[]) {
      const kept = skip.size === 0 ? [...clients] : clients.filter((client) => !skip.has(client.id));
      skipped += clients.length - kept.length;
      for (const client of kept) near.add(client.id, client.created_at ?? '');
      return kept;
    },
    save: (out, rows) =>
      writeState(path, {
        version: STATE_VERSION,
        bound: createdTo,
        near: near.list(),
        filters,
        last: { out: resolve(out), rows, finishedAt: new Date().toISOString(), from: createdFrom ?? null, skipAtFrom: skipList },
      }),
    summary: () => ({
      mode: 'since-last',
      state: path,
      resumed: state !== undefined,
      previousBound: state?.bound,
      skippedAtBound: skipped,
      ...(replay && state && { replaced: { out: state.last.out, from: createdFrom ?? null } }),
    }),
  };
}

/**
 * One period of a calendar-aligned report: [from, end) exactly. The bounds sent are whole
 * seconds (a period starts at a local midnight) and both inclusive, so a service that compares
 * in seconds or rounds still lists every client of the period; the client at the end itself,
 * and any the service's rounding lets in from outside, are dropped here by their own created_at
 * and left to the period they belong to. The state's bound is the next period's start.
 */
function startPeriod(
  path: string,
  state: SinceLastState | undefined,
  filters: SinceLastState['filters'],
  { period, more }: ChainedPeriod,
  replay: boolean,
): IncrementalRun {
  if (replay && state) {
    throw new UsageError(
      `${state.last.out} holds ${state.period?.name ?? 'a period'} already exported by ${path}: each period goes to its own file; put {period} in the output name`,
      'output_exists',
    );
  }
  if (state && Date.parse(state.bound) !== period.fromMs) {
    throw new UsageError(`the state file ${path} moved on while this run was planned (another run?): run it again`, 'state_invalid');
  }
  const createdFrom = new Date(period.fromMs).toISOString();
  const createdTo = new Date(period.endMs).toISOString();
  let dropped = 0;
  const keep = inPeriod(period);
  return {
    createdFrom,
    createdTo,
    more,
    select(clients: readonly Client[]) {
      const kept = keep(clients);
      dropped += clients.length - kept.length;
      return kept;
    },
    save: (out, rows) =>
      writeState(path, {
        version: STATE_VERSION,
        bound: createdTo,
        period: { name: period.name, zone: period.zone },
        near: [],
        filters,
        last: { out: resolve(out), rows, finishedAt: new Date().toISOString(), from: createdFrom, skipAtFrom: [] },
      }),
    summary: () => ({
      mode: 'since-last',
      state: path,
      resumed: state !== undefined,
      previousBound: state?.bound,
      skippedAtBound: dropped,
      period: { name: period.name, label: period.label, zone: period.zone, more },
    }),
  };
}
