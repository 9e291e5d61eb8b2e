/**
 * A test-only signer for the many-core bench mode and the in-flight test: it signs nothing
 * (for a sandbox started with verifySignatures: false) but takes the time a machine
 * of `threads` signing threads at `ms` a signature would, on timers instead of CPU. So this
 * 2-core machine's client runs at a 16-core signing pace, with the same pre-signing queue: a
 * signature waits for a free "thread" and takes `ms` on it. Each answer is a string of its own
 * as long as an RSA-4096 signature in base64 (684 characters), so the rows signed ahead weigh in
 * memory what real ones do. Given to the library's
 * createServiceClient({ signer }) only: no flag of the CLI can reach it.
 */

/** `{ threads, ms }`: the machine emulated. `signed` counts the signatures made. */
export function createPacedSigner({ threads, ms }) {
  // When each emulated thread is next free (performance.now() clock).
  const freeAt = new Array(threads).fill(0);
  const signer = {
    scheme: { hash: 'sha256', padding: 'pkcs1' },
    signed: 0,
    sign() {
      const now = performance.now();
      let thread = 0;
      for (let i = 1; i < threads; i++) if (freeAt[i] < freeAt[thread]) thread = i;
      const done = Math.max(now, freeAt[thread]) + ms;
      freeAt[thread] = done;
      return new Promise((resolve) =>
        setTimeout(() => {
          signer.signed++;
          resolve(signature(signer.signed));
        }, done - now),
      );
    },
  };
  return signer;
}

/** RSA-4096's signature is 512 bytes: 684 characters of base64. */
const SIGNATURE_CHARS = 684;

/** A distinct string of a real signature's length (the count, padded), not one shared constant. */
function signature(n) {
  return String(n).padStart(SIGNATURE_CHARS, 'A');
}
