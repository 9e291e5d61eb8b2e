/**
 * The sandbox's clock: what "now" is for a client created through it. By default the real
 * time; `clock: '2026-03-01T00:00:00Z'` starts it there and lets it run on (so a rehearsal can
 * live in any week); a function hands it to the caller whole (tests that step through months).
 * `set` moves it while the sandbox runs (`POST /_sandbox/clock`); it runs on from there.
 */
import { UsageError } from '../errors.js';

/** A start instant (the clock runs on from it), or a function read on every create. */
export type ClockSetting = string | Date | (() => Date);

export class SandboxClock {
  #offsetMs = 0;
  readonly #read: (() => Date) | undefined;

  constructor(setting?: ClockSetting) {
    if (typeof setting === 'function') this.#read = setting;
    else if (setting !== undefined) this.set(setting);
  }

  /** The sandbox's now, ms since the epoch. */
  now(): number {
    return this.#read ? this.#read().getTime() : Date.now() + this.#offsetMs;
  }

  /** Moves the clock to `at`; it runs on from there. Not for a clock given as a function. */
  set(at: string | Date): void {
    if (this.#read) throw new UsageError('the sandbox clock is a function of its caller: change it there', 'bad_option');
    const ms = at instanceof Date ? at.getTime() : Date.parse(at);
    if (Number.isNaN(ms)) {
      throw new UsageError(`sandbox clock ${JSON.stringify(String(at))}: not an ISO 8601 instant (e.g. 2026-03-01T00:00:00Z)`, 'bad_option');
    }
    this.#offsetMs = ms - Date.now();
  }
}
