/** Resolves at `instant` (a Date.now() time), at once when it has passed; rejects when `signal` aborts first. */
export function waitUntil(instant: number, signal: AbortSignal | undefined): Promise<void> {
  const ms = instant - Date.now();
  if (ms <= 0) return Promise.resolve();
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });
}
