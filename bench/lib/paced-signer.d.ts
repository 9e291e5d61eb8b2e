import type { Signer } from '../../src/service/signing.js';

/** A test-only signer taking the time `threads` signing threads of `ms` each would, on timers: it signs nothing. */
export function createPacedSigner(machine: { threads: number; ms: number }): Signer & { signed: number };
