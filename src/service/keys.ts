import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { printable } from '../infra/printable.js';

/** The service accepts only RSA-4096 keys. */
export const REQUIRED_MODULUS_BITS = 4096;

/** The private key loaded by loadSigningKey, and what should be fixed about it. */
export interface LoadedKey {
  /** The private key, parsed once: pass it to createSigner. */
  key: KeyObject;
  /** Things the user should fix but that do not stop the run (a key readable by others). */
  warnings: string[];
}

/**
 * Loads the RSA private key once from a PEM file (PKCS#8 or PKCS#1). Refuses what the service
 * would refuse later, one signature at a time, with a UsageError: a file that cannot be read
 * (`key_unreadable`), not a PEM private key, encrypted, or readable by every user
 * (`key_invalid`), not RSA (`key_not_rsa`), not RSA-4096 (`key_size`). Messages name the file,
 * never its content. The PEM itself (from an environment variable): signingKeyFromPem.
 */
export async function loadSigningKey(file: string): Promise<LoadedKey> {
  let pem: string;
  let mode: number;
  try {
    [pem, mode] = await Promise.all([readFile(file, 'utf8'), stat(file).then((s) => s.mode)]);
  } catch (error) {
    throw new UsageError(
      `cannot read signing key ${printable(file)}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      'key_unreadable',
    );
  }
  const key = signingKeyFromPem(pem, printable(file));
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

/**
 * Parses a PEM private key given as text (PKCS#8 `BEGIN PRIVATE KEY` or PKCS#1 `BEGIN RSA
 * PRIVATE KEY`), as it comes from an environment variable or a secret store, with the checks
 * loadSigningKey makes and the same UsageError codes: `key_invalid` (not a PEM private key, or
 * encrypted), `key_not_rsa`, `key_size` (anything but RSA-4096). `source` names the key in
 * messages (an environment variable's name, say); its content is never shown.
 */
export function signingKeyFromPem(pem: string, source?: string): KeyObject {
  // A PEM pasted into one line of an env file often arrives with its newlines as literal "\n".
  const text = !pem.includes('\n') && pem.includes('\\n') ? pem.replaceAll('\\n', '\n') : pem;
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch (error) {
    const why = isEncrypted(text, error)
      ? 'it is encrypted; decrypt it first (openssl pkey -in KEY -out PLAIN)'
      : 'it is not a PEM private key (PKCS#8 "BEGIN PRIVATE KEY" or PKCS#1 "BEGIN RSA PRIVATE KEY")';
    throw new UsageError(`cannot use ${named(source)}: ${why}`, 'key_invalid');
  }
  return assertSigningKey(key, source);
}

/**
 * The key itself, or a UsageError for what the service would refuse at the first signature:
 * not a private key (`key_invalid`), not RSA (`key_not_rsa`), not RSA-4096 (`key_size`).
 */
export function assertSigningKey(key: KeyObject, source?: string): KeyObject {
  if (key.type !== 'private') {
    throw new UsageError(
      `cannot use ${named(source)}: it is a ${key.type} key; signing needs the RSA-${REQUIRED_MODULUS_BITS} private key`,
      'key_invalid',
    );
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new UsageError(
      `${named(source)} is a ${key.asymmetricKeyType ?? 'non-RSA'} key; the service accepts only RSA-${REQUIRED_MODULUS_BITS} (ccs-bulk keygen makes one)`,
      'key_not_rsa',
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (bits !== REQUIRED_MODULUS_BITS) {
    throw new UsageError(
      `${named(source)} is RSA-${bits ?? '?'}; the service accepts only RSA-${REQUIRED_MODULUS_BITS} (ccs-bulk keygen makes one)`,
      'key_size',
    );
  }
  return key;
}

const named = (source: string | undefined) => (source === undefined ? 'signing key' : `signing key ${source}`);

/**
 * OpenSSL 3 reports a missing passphrase as "interrupted or cancelled", so the PEM's own
 * markers decide first (PKCS#8 `ENCRYPTED PRIVATE KEY`, PKCS#1 `Proc-Type: 4,ENCRYPTED`).
 */
function isEncrypted(pem: string, error: unknown): boolean {
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,\s*ENCRYPTED/.test(pem)) return true;
  const stack = (error as { opensslErrorStack?: unknown }).opensslErrorStack;
  return /passphrase/i.test(`${(error as Error).message} ${Array.isArray(stack) ? stack.join(' ') : ''}`);
}

/** SHA-256 over the DER SPKI, as `SHA256:<base64>` (the form ssh-keygen prints). */
export function publicKeyFingerprint(key: KeyObject): string {
  const publicKey = key.type === 'public' ? key : createPublicKey(key);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
}
