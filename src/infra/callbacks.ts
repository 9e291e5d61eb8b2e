/**
 * A caller's callbacks (onProgress, onRow, onPlan…) run inside ours: one that throws must not
 * leave a lock held, a file open or a thread running. Each is called through a guard that
 * catches what it throws, keeps the first error, and aborts the run's signal, so the run stops
 * as it would for Ctrl-C — its files consistent, its lock released — and the caller then gets
 * that error back from the call that took the callback.
 */
export class CallbackGuard {
  readonly #controller = new AbortController();
  #failure: { error: unknown } | undefined;

  /** Aborted once a callback threw. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The caller's signal and this guard's, as one. */
  join(signal: AbortSignal | undefined): AbortSignal {
    return signal === undefined ? this.signal : AbortSignal.any([signal, this.signal]);
  }

  /** `fn`, called through the guard; after a failure, no callback is called again. */
  wrap<A extends unknown[]>(fn: ((...args: A) => unknown) | undefined): ((...args: A) => void) | undefined {
    if (fn === undefined) return undefined;
    return (...args: A) => {
      if (this.#failure !== undefined) return;
      try {
        const result = fn(...args);
        // An async callback's rejection is the caller's error too (not an unhandled rejection).
        if (result instanceof Promise) result.catch((error: unknown) => this.#fail(error));
      } catch (error) {
        this.#fail(error);
      }
    };
  }

  /** Throws the first error a callback threw, if one did. */
  rethrow(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    this.#controller.abort(error);
  }
}
