/**
 * Once per `vitest run`, before any test file: what every file would otherwise make for itself.
 * RSA-4096 key pairs take 0.5–3 s of CPU each (more on a busy machine) and a sandbox made
 * without a public key generates one: the suite's sandboxes share these instead (the few tests
 * about generating a key still generate theirs).
 */
import type { TestProject } from 'vitest/node';
import { generateRsaKeyPair, type PemKeyPair } from '../src/service/signing.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the key pair test sandboxes verify signatures with */
    signingKeys: PemKeyPair;
    /** a second pair: a key the sandbox does not know */
    otherSigningKeys: PemKeyPair;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const [keys, other] = await Promise.all([generateRsaKeyPair(), generateRsaKeyPair()]);
  project.provide('signingKeys', keys);
  project.provide('otherSigningKeys', other);
}
