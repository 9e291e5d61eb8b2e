/**
 * Overload or background noise: the part of the concurrency controller (concurrency.ts) that
 * reads refusals. A service at its limit refuses more as the window grows (a cap on requests at
 * once refuses what is past it, a token bucket the share past its rate), and fewer once the
 * window is cut; a flaky one refuses a steady small share at any window. So refusals are kept
 * per limit, and a window's are judged against the share at smaller and larger limits by
 * two-proportion tests. Pure, as the controller: the table in, a verdict out.
 */

/** What the windows judged at one limit were answered, decayed to the last ENTRY_ANSWERS. */
export interface LimitFaults {
  readonly limit: number;
  readonly answers: number;
  /** 429s. */
  readonly throttled: number;
  /** 5xx, timeouts, no answer. */
  readonly failed: number;
}

/** Sorted by limit. */
export type FaultTable = readonly LimitFaults[];

export type FaultKind = 'throttled' | 'any';

/**
 * `limit`: the service's limit (refusals rise with the window); `noise`: refusals at a share
 * the smaller windows get as well (or the larger ones no more); `none`: no refusal, or too few
 * to say.
 */
export type Verdict = 'limit' | 'noise' | 'none';

/** Answers one limit's entry remembers: recent enough to follow a change, enough to judge a 2% share. */
export const ENTRY_ANSWERS = 2000;
/** Limits remembered; past that, the one farthest from the limit now goes. */
const ENTRIES = 48;
/**
 * How far above the other share (in standard errors) a share must be to differ. One-sided,
 * tested about once a round trip: high enough that noise seldom passes it, low enough that one
 * refusal after a long clean run at the limit below does (a cap on requests at once, probed one past).
 */
export const RISE_Z = 3;
/**
 * What is assumed where nothing smaller was seen: a share of PRIOR_SHARE over PRIOR_ANSWERS
 * answers. Weak on purpose: it keeps a cold start's first refusal from counting as a limit
 * unless it is a burst, and gives way to what the smaller windows show.
 */
const PRIOR_ANSWERS = 20;
const PRIOR_SHARE = 0.01;
/** Refusals seen before they can be a share rather than a fluke at a limit's edge. */
const NOISE_SEEN = 3;
/**
 * Above this share refusals are no background, however they go with the window: a service that
 * refuses one in five at every window tried is pushing back harder than the smallest window.
 */
const NOISE_MAX_SHARE = 0.2;
/** Refusals a share is built on before a z-test is trusted with it. */
const FEW = 3;

interface Tally {
  answers: number;
  faults: number;
}

/** The window just judged at `window.limit`, added to its entry. */
export function record(table: FaultTable, window: LimitFaults): FaultTable {
  const at = table.findIndex((entry) => entry.limit === window.limit);
  const old = at < 0 ? undefined : table[at]!;
  const answers = (old?.answers ?? 0) + window.answers;
  const keep = answers > ENTRY_ANSWERS ? ENTRY_ANSWERS / answers : 1;
  const entry: LimitFaults = {
    limit: window.limit,
    answers: answers * keep,
    throttled: ((old?.throttled ?? 0) + window.throttled) * keep,
    failed: ((old?.failed ?? 0) + window.failed) * keep,
  };
  const rest = table.filter((other) => other.limit !== window.limit);
  const next = [...rest, entry].sort((a, b) => a.limit - b.limit);
  if (next.length <= ENTRIES) return next;
  // Too many: drop the limit farthest from this one (a limit long left says least of now).
  let far = 0;
  for (let i = 1; i < next.length; i++) {
    if (Math.abs(next[i]!.limit - window.limit) > Math.abs(next[far]!.limit - window.limit)) far = i;
  }
  return next.filter((_, i) => i !== far);
}

/**
 * The refusals (of `kind`) of `window`, judged at `window.limit` with `table` already holding it.
 * `expectLimit`: a limit is likely here (at a ceiling the service enforced, or in slow start,
 * before anything pushed back), so a refusal counts unless it is already known as noise.
 */
export function judgeFaults(table: FaultTable, window: LimitFaults, kind: FaultKind, expectLimit: boolean): Verdict {
  const count = (entry: LimitFaults) => (kind === 'throttled' ? entry.throttled : entry.throttled + entry.failed);
  const now = { answers: window.answers, faults: count(window) };
  if (now.faults === 0) return 'none';
  const at = empty();
  const below = empty();
  const above = empty();
  for (const entry of table) {
    const into = entry.limit === window.limit ? at : entry.limit < window.limit ? below : above;
    into.answers += entry.answers;
    into.faults += count(entry);
  }
  const upTo = { answers: at.answers + below.answers, faults: at.faults + below.faults };
  // A burst: this window refused far more than the windows up to it did (a bucket emptied).
  if (higher(now, withPrior(minus(upTo, now)))) return 'limit';
  // Refusals that a smaller window gets as often as this one, and a larger one no more often
  // (after cuts, the windows above are where they came before): they do not rise with the window.
  // (Seen at one limit only, they say nothing of how they go with it.)
  const elsewhere = below.faults + above.faults > 0;
  const small = upTo.faults <= NOISE_MAX_SHARE * upTo.answers;
  if (elsewhere && small && upTo.faults + above.faults >= NOISE_SEEN && !higher(above, upTo) && !higher(at, withPrior(below))) return 'noise';
  // Where a limit is likely, a refusal that is not yet a share is its doing: the cut costs a
  // round trip at nine tenths, and its windows show whether the refusals go with it.
  return expectLimit || higher(at, withPrior(below)) ? 'limit' : 'none';
}

function empty(): Tally {
  return { answers: 0, faults: 0 };
}

function minus(a: Tally, b: Tally): Tally {
  return { answers: Math.max(0, a.answers - b.answers), faults: Math.max(0, a.faults - b.faults) };
}

function withPrior(t: Tally): Tally {
  return { answers: t.answers + PRIOR_ANSWERS, faults: t.faults + PRIOR_ANSWERS * PRIOR_SHARE };
}

/** Whether `a`'s share is above `b`'s beyond chance (two-proportion z-test). */
function higher(a: Tally, b: Tally): boolean {
  // Below a few refusals the normal approximation flatters a lone one.
  if (a.faults < FEW || a.answers === 0 || b.answers === 0) return false;
  const share = a.faults / a.answers;
  const other = b.faults / b.answers;
  if (share <= other) return false;
  const pooled = (a.faults + b.faults) / (a.answers + b.answers);
  const error = Math.sqrt(pooled * (1 - pooled) * (1 / a.answers + 1 / b.answers));
  return (share - other) / error > RISE_Z;
}
