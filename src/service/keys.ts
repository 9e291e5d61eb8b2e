import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { printable } from '../infra/printable.js';
import { REQUIRED_MODULUS_BITS } from './signing.js';

export interface LoadedKey {
  /** The private key, parsed once: pass it to createSigner. */
  key: KeyObject;
  /** Things the user should fix but that do not stop the run (a key readable by others). */
  warnings: string[];
}

/**
 * Loads the RSA private key once (PKCS#8 or PKCS#1 PEM). Refuses what the service would
 * refuse later, one signature at a time: anything but RSA-4096. Messages name the file,
 * never its content.
 */
export async function loadSigningKey(file: string): Promise<LoadedKey> {
  let pem: string;
  let mode: number;
  try {
    [pem, mode] = await Promise.all([readFile(file, 'utf8'), stat(file).then((s) => s.mode)]);
  } catch (error) {
    throw new UsageError(
      `cannot read signing key ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      'key_unreadable',
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (error) {
    const text = String((error as Error).message);
    const why = /passphrase/i.test(text)
      ? 'it is encrypted; decrypt it first (openssl pkey -in KEY -out PLAIN)'
      : 'it is not a PEM private key (PKCS#8 "BEGIN PRIVATE KEY" or PKCS#1 "BEGIN RSA PRIVATE KEY")';
    throw new UsageError(`cannot use signing key ${file}: ${why}`, 'key_invalid');
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new UsageError(
      `signing key ${file} is a ${key.asymmetricKeyType ?? 'non-RSA'} key; the service accepts only RSA-4096 (ccs-bulk keygen makes one)`,
      'key_not_rsa',
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (bits !== REQUIRED_MODULUS_BITS) {
    throw new UsageError(
      `signing key ${file} is RSA-${bits ?? '?'}; the service accepts only RSA-${REQUIRED_MODULUS_BITS} (ccs-bulk keygen makes one)`,
      'key_size',
    );
  }
  const warnings: string[] = [];
  // Every account able to read it: refused, as ssh refuses such a key; its group: said.
  if ((mode & 0o007) !== 0) {
    throw new UsageError(
      `signing key ${printable(file)} is readable by every user (mode ${(mode & 0o777).toString(8)}); run: chmod 600 ${printable(file)}`,
      'key_invalid',
    );
  }
  if ((mode & 0o070) !== 0) {
    warnings.push(
      `signing key ${printable(file)} is readable by its group (mode ${(mode & 0o777).toString(8)}); run: chmod 600 ${printable(file)}`,
    );
  }
  return { key, warnings };
}

/** SHA-256 over the DER SPKI, as `SHA256:<base64>` (the form ssh-keygen prints). */
export function publicKeyFingerprint(key: KeyObject): string {
  const publicKey = key.type === 'public' ? key : createPublicKey(key);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
}
