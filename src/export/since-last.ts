/**
 * Incremental exports (`--since-last STATE`): the state file remembers the previous successful
 * run's upper bound and the clients it wrote near that bound. The next run asks for
 * `created_at.from = bound` (inclusive, so nothing created at the bound is lost) and drops the
 * ids already written (so nothing there is written twice). "Near" is the bound's whole second
 * and the second before it: the service's time precision and rounding are unknown, so a
 * service that compares in seconds, or rounds, still never repeats a client. The state is
 * replaced (temp file, then rename) only after the output was committed.
 */
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { tempBeside } from '../temp-files.js';

const STATE_VERSION = 1;

const seenSchema = z.object({ id: z.string(), created_at: z.string() });

const stateSchema = z.object({
  version: z.literal(STATE_VERSION),
  /** The previous run's `created_at.to`, exactly as sent. */
  bound: z.string(),
  /** Clients written by earlier runs whose created_at is within NEAR_MS below the bound's second. */
  near: z.array(seenSchema),
  /** The filters the state was made with: another filter would need another window. */
  filters: z.object({
    status: z.array(z.string()).nullable(),
    creditStatus: z.array(z.string()).nullable(),
  }),
  last: z.object({ out: z.string(), rows: z.number(), finishedAt: z.string() }),
});

export type SinceLastState = z.infer<typeof stateSchema>;
export type SeenClient = z.infer<typeof seenSchema>;
export type StateFilters = SinceLastState['filters'];

/** One second below the bound's second: covers a service that rounds instead of truncating. */
const NEAR_MS = 1000;

export function stateFilters(status: readonly string[] | undefined, creditStatus: readonly string[] | undefined): StateFilters {
  return {
    status: status ? [...status].sort() : null,
    creditStatus: creditStatus ? [...creditStatus].sort() : null,
  };
}

/** The state, or undefined before the first run. A damaged state is exit 2, never a silent full export. */
export async function readState(path: string): Promise<SinceLastState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the state file ${path}: ${code ?? 'error'}`, 'state_invalid');
  }
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

/** Refuses a state made with other filters: its bound says nothing about this filter's window. */
export function checkStateFilters(path: string, state: SinceLastState, filters: StateFilters): void {
  const same = JSON.stringify(state.filters) === JSON.stringify(filters);
  if (!same) {
    const show = (f: StateFilters) =>
      `status ${f.status?.join(',') ?? 'any'}, credit_status ${f.creditStatus?.join(',') ?? 'any'}`;
    throw new UsageError(
      `the state file ${path} was made with ${show(state.filters)}, not ${show(filters)}: use one state file per report`,
      'state_mismatch',
    );
  }
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
  const temp = tempBeside(path);
  try {
    await writeFile(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw new UsageError(
      `the export was written but the state file ${path} could not be: ${(error as NodeJS.ErrnoException).code ?? error}; the next run repeats this window`,
      'state_invalid',
    );
  }
}
