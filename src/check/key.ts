/** check's signing-key line: RSA-4096, its fingerprint (to compare with what was registered), its file mode. */
import type { KeyObject } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { CcsError } from '../errors.js';
import { printable } from '../infra/printable.js';
import { assertSigningKey, loadSigningKey, publicKeyFingerprint, signingKeyFromPem } from '../service/keys.js';
import { type CheckLine, failed, ok, warning } from './types.js';
import type { CheckWords } from './words.js';

/** A PEM file (the command), or a key the caller already holds: a KeyObject or the PEM text. */
export type SigningKeySource = { file: string } | { key: KeyObject | string };

export async function checkSigningKey(
  source: SigningKeySource | undefined,
  words: CheckWords,
  note = '',
): Promise<{ line: CheckLine; key: KeyObject | undefined }> {
  if (source === undefined) return { line: failed('signing key', `none configured${note}`, words.keyMissing), key: undefined };
  try {
    if ('key' in source) {
      const key = typeof source.key === 'string' ? signingKeyFromPem(source.key) : assertSigningKey(source.key);
      return { line: ok('signing key', `RSA-4096, public key ${publicKeyFingerprint(key)}`), key };
    }
    const { file } = source;
    const { key, warnings } = await loadSigningKey(file);
    const mode = ((await stat(file)).mode & 0o777).toString(8);
    const detail = `${printable(file)}: RSA-4096, public key ${publicKeyFingerprint(key)}, mode ${mode}`;
    if (warnings.length > 0) return { line: warning('signing key', detail, warnings.join('; ')), key };
    return { line: ok('signing key', detail), key };
  } catch (error) {
    if (!(error instanceof CcsError)) throw error;
    return { line: failed('signing key', error.message, words.keyUnusable), key: undefined };
  }
}
