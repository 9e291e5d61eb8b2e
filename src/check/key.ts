/** check's signing-key line: RSA-4096, its fingerprint (to compare with what was registered), its file mode. */
import type { KeyObject } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { CcsError } from '../errors.js';
import { loadSigningKey, publicKeyFingerprint } from '../service/keys.js';
import { type CheckLine, failed, ok, warning } from './types.js';

export async function checkSigningKey(file: string | undefined, note = ''): Promise<{ line: CheckLine; key: KeyObject | undefined }> {
  if (file === undefined) {
    return {
      line: failed('signing key', `none configured${note}`, 'set CCS_SIGNING_KEY_FILE or --signing-key to the RSA-4096 private key PEM whose public key is registered (ccs-bulk keygen makes a pair)'),
      key: undefined,
    };
  }
  try {
    const { key, warnings } = await loadSigningKey(file);
    const mode = ((await stat(file)).mode & 0o777).toString(8);
    const detail = `${file}: RSA-4096, public key ${publicKeyFingerprint(key)}, mode ${mode}`;
    if (warnings.length > 0) return { line: warning('signing key', detail, warnings.join('; ')), key };
    return { line: ok('signing key', detail), key };
  } catch (error) {
    if (!(error instanceof CcsError)) throw error;
    return { line: failed('signing key', error.message, 'ccs-bulk keygen --out DIR makes an RSA-4096 pair; register its public.pem with the service'), key: undefined };
  }
}
