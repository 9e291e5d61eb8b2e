/**
 * Once per `vitest run`, before any test file: what every file would otherwise make for itself.
 * RSA-4096 key pairs take 0.5–3 s of CPU each (more on a busy machine) and a sandbox made
 * without a public key generates one: the suite's sandboxes share these instead (the few tests
 * about generating a key still generate theirs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

export default async function setup(project: TestProject): Promise<() => void> {
  // The held e-mails an import keeps between runs go to the user's cache folder: the suite's
  // own, here (the workers and the CLI runs they start inherit it), never the real one.
  const cache = mkdtempSync(join(tmpdir(), 'ccs-bulk-test-cache-'));
  process.env.XDG_CACHE_HOME = cache;
  const [keys, other] = await Promise.all([generateRsaKeyPair(), generateRsaKeyPair()]);
  project.provide('signingKeys', keys);
  project.provide('otherSigningKeys', other);
  return () => rmSync(cache, { recursive: true, force: true });
}
