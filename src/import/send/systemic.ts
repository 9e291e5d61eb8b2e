/**
 * Answers that ccs-bulk itself refuses (a 200 without a client, a redirect, a body too large)
 * say nothing about a row when every answer is the same: the endpoint is wrong (a login page,
 * a proxy, another service). Once the last SYSTEMIC_STREAK answers in a row are the same
 * refusal, or every answer of a shorter run is, the run stops (exit 3, resumable) instead of
 * failing the rest of the file one request at a time.
 */
import type { ErrorCode } from '../../errors.js';

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

  /** One row's final answer: `code` of its failure, undefined when it succeeded. True once the streak is systemic. */
  answer(code: ErrorCode | undefined, row: number, message: string): boolean {
    this.#answers++;
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
