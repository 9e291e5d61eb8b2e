/**
 * Answers that ccs-bulk itself refuses (a 200 without a client, a redirect, a body too large)
 * say nothing about a row when every answer is the same: the endpoint is wrong (a login page,
 * a proxy, another service). Once the last SYSTEMIC_STREAK answers in a row are the same
 * refusal, or every answer of a shorter run is, the run stops (exit 3, resumable) instead of
 * failing the rest of the file one request at a time.
 *
 * A 404/405 to every create from the first says the same of the base URL's path, sooner and
 * more surely: the run stops on it (exit 2) before any row is failed (OpeningAnswers).
 */
import type { ConnectionError, ErrorCode, ServiceError } from '../../errors.js';
import { CREATE_PATH, calledUrl, isMissingRoute, missingRouteError } from '../../service/missing-route.js';
import type { Recorder } from '../record/recorder.js';

export const SYSTEMIC_CODES: readonly ErrorCode[] = ['bad_response', 'redirect_refused', 'response_too_large'];
export const SYSTEMIC_STREAK = 20;

export interface SystemicAnswer {
  code: ErrorCode;
  /** Answers in a row with this code. */
  count: number;
  row: number;
  example: string;
}

/** Pure bookkeeping of the rows' final answers, in the order they came. */
export class AnswerStreak {
  #answers = 0;
  #streak: SystemicAnswer | undefined;
  /** The first answers, while each is 404/405. */
  readonly opening = new OpeningAnswers();

  /** One row's final answer: `code` of its failure, undefined when it succeeded. True once the streak is systemic. */
  answer(code: ErrorCode | undefined, row: number, message: string): boolean {
    this.#answers++;
    if (code === undefined) this.opening.succeeded();
    if (code === undefined || !SYSTEMIC_CODES.includes(code)) this.#streak = undefined;
    else if (this.#streak?.code === code) this.#streak.count++;
    else this.#streak = { code, count: 1, row, example: message };
    return (this.#streak?.count ?? 0) >= SYSTEMIC_STREAK;
  }

  /** At the end of sending: the streak, when it is systemic (N in a row, or every answer of a shorter run). */
  systemic(): SystemicAnswer | undefined {
    const streak = this.#streak;
    if (!streak) return undefined;
    return streak.count >= SYSTEMIC_STREAK || streak.count === this.#answers ? streak : undefined;
  }
}

export function systemicMessage(streak: SystemicAnswer): string {
  const which = streak.count === 1 ? "the service's only answer was refused" : `the service's last ${streak.count} answers were all refused the same way`;
  return (
    `${which} (${streak.code}), ` +
    `e.g. row ${streak.row}: ${streak.example}; nothing more is sent. Check --base-url: ` +
    'something other than the Client Credit Service answers there'
  );
}

/** A row answered 404/405 while that was every answer: how to record it once the verdict is in. */
export interface HeldRow {
  /** Not systemic after all: the row failed as any other. */
  fail(): void;
  /** Nothing serves creates there: the row was not created, resume sends it again. */
  unsend(message: string): void;
}

export interface MissingRoute {
  /** The service's root the creates went to. */
  baseUrl: string;
  /** Rows answered 404/405 before the stop. */
  count: number;
  status: number;
  example: ServiceError;
}

/**
 * The run's first answers to creates while every one is 404/405 (the base URL's path is
 * wrong). Those rows are held back, not recorded: once SYSTEMIC_STREAK of them (or every
 * answer of a shorter run) came back so, the run stops and they are recorded unsent; the
 * first other answer ends the watch and they fail as any other row would.
 */
export class OpeningAnswers {
  #verdict: 'open' | 'found' | 'missing' = 'open';
  #held: HeldRow[] = [];
  #example: { error: ServiceError; baseUrl: string } | undefined;

  /** A create's failure (sent to `baseUrl`): true when the row is held back or already recorded unsent (the caller records nothing more). */
  failed(failure: ServiceError, row: HeldRow, baseUrl: string): boolean {
    const missing = isMissingRoute(failure);
    if (this.#verdict === 'missing' && missing) {
      row.unsend(UNSENT);
      return true;
    }
    if (this.#verdict !== 'open') return false;
    if (!missing) {
      this.succeeded();
      return false;
    }
    this.#example ??= { error: failure, baseUrl };
    this.#held.push(row);
    return true;
  }

  /** Any other answer: the path is served; the rows held fail as they would have. */
  succeeded(): void {
    if (this.#verdict !== 'open') return;
    this.#verdict = 'found';
    for (const row of this.#held.splice(0)) row.fail();
  }

  /** The stop once SYSTEMIC_STREAK rows are held, or (`end`) every answer of the run was 404/405; undefined otherwise. */
  verdict(end = false): MissingRoute | undefined {
    const count = this.#held.length;
    if (this.#verdict !== 'open' || this.#example === undefined || (count < SYSTEMIC_STREAK && !end)) return undefined;
    this.#verdict = 'missing';
    const { error, baseUrl } = this.#example;
    return { baseUrl, count, status: error.status ?? 404, example: error };
  }

  /** After the stop is in force: the rows held are recorded unsent. */
  release(): void {
    for (const row of this.#held.splice(0)) row.unsend(UNSENT);
  }
}

const UNSENT = 'not created: nothing serves Create Client at this base URL (404/405); --resume sends it again';

/** The stop for a run whose every create answer was 404/405: the URL it called and the fix. */
export function missingRouteStop(route: MissingRoute): ConnectionError {
  const which = route.count === 1 ? 'the only create' : `all of the first ${route.count} creates`;
  return missingRouteError(calledUrl('POST', route.baseUrl, CREATE_PATH), 'Create Client', `${route.status} to ${which}`, route.example, 'no client was created and no other row was sent');
}

/** Stops the recorder on a missing route, then records the rows held back as unsent. */
export function stopOnMissingRoute(opening: OpeningAnswers, recorder: Recorder, end = false): boolean {
  const route = opening.verdict(end);
  if (route === undefined) return false;
  const error = missingRouteStop(route);
  recorder.stop('connection', error.message, error.code, { cause: error.message.slice(0, -error.fix.length - 2), fix: error.fix });
  opening.release();
  return true;
}

/**
 * Once no answer is on its way: a short run whose every answer was 404/405 stops here (unless
 * it was interrupted, which says so itself), and the rows held back are recorded unsent.
 */
export function settleOpening(opening: OpeningAnswers, recorder: Recorder, interrupted: boolean): void {
  if (!interrupted && stopOnMissingRoute(opening, recorder, true)) return;
  opening.release();
}
