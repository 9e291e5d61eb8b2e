/**
 * X-Signature: base64 of an RSA signature over the exact body bytes sent (docs/service.md#signing).
 * Signing runs in libuv's thread pool (crypto.sign's callback form), never on the event loop.
 */
import { constants, generateKeyPair, type KeyObject, sign, verify } from 'node:crypto';
import { promisify } from 'node:util';
import { SERVICE_DEFAULTS } from './defaults.js';
import { assertSigningKey, REQUIRED_MODULUS_BITS, signingKeyFromPem } from './keys.js';

// Where the sandbox and the key generator have always found it.
export { REQUIRED_MODULUS_BITS };

export type SignatureHash = 'sha256' | 'sha512';
export type SignaturePadding = 'pkcs1' | 'pss';

/** How X-Signature is made: the hash and the RSA padding the service expects (default sha256 with PKCS#1 v1.5). */
export interface SignatureScheme {
  /** The digest signed: sha256 (default) or sha512. */
  hash: SignatureHash;
  /** RSA padding: pkcs1 (PKCS#1 v1.5, default) or pss. */
  padding: SignaturePadding;
}

export const DEFAULT_SCHEME: SignatureScheme = SERVICE_DEFAULTS.scheme;

/** Signs request bodies for X-Signature (createSigner); signing runs in Node's thread pool. */
export interface Signer {
  /** base64 signature of exactly these bytes */
  sign(body: Uint8Array): Promise<string>;
  /** The hash and padding this signer uses. */
  readonly scheme: SignatureScheme;
}

function keyInput(key: KeyObject, scheme: SignatureScheme) {
  return scheme.padding === 'pss'
    ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
    : { key, padding: constants.RSA_PKCS1_PADDING };
}

/**
 * A signer over a private key parsed once: a KeyObject, or the PEM text itself (from an
 * environment variable, say). What the service would refuse at the first request is refused
 * here, with loadSigningKey's checks and UsageError codes: not a PEM private key or encrypted
 * (`key_invalid`), not RSA (`key_not_rsa`), not RSA-4096 (`key_size`).
 */
export function createSigner(privateKey: KeyObject | string, scheme: SignatureScheme = DEFAULT_SCHEME): Signer {
  const key = typeof privateKey === 'string' ? signingKeyFromPem(privateKey) : assertSigningKey(privateKey);
  const input = keyInput(key, scheme);
  return {
    scheme,
    sign(body) {
      return new Promise((resolve, reject) => {
        sign(scheme.hash, body, input, (error, signature) => {
          if (error) reject(error);
          else resolve(signature.toString('base64'));
        });
      });
    },
  };
}

/** Checks a base64 signature; false (never a throw) for anything malformed. */
export function verifySignature(
  publicKey: KeyObject,
  body: Uint8Array,
  signatureBase64: string,
  scheme: SignatureScheme = DEFAULT_SCHEME,
): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signatureBase64)) return false;
  try {
    return verify(scheme.hash, body, keyInput(publicKey, scheme), Buffer.from(signatureBase64, 'base64'));
  } catch {
    return false;
  }
}

const generateKeyPairAsync = promisify(generateKeyPair);

export interface PemKeyPair {
  /** The private key, PKCS#8 PEM (`BEGIN PRIVATE KEY`): keep it secret. */
  privateKeyPem: string;
  /** The public key, SPKI PEM (`BEGIN PUBLIC KEY`): what the service is given. */
  publicKeyPem: string;
}

/** A fresh RSA-4096 key pair: PKCS#8 private, SPKI public. Takes ~0.5–3 s of a pool thread. */
export async function generateRsaKeyPair(): Promise<PemKeyPair> {
  const { privateKey, publicKey } = await generateKeyPairAsync('rsa', {
    modulusLength: REQUIRED_MODULUS_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}
