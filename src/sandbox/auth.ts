/**
 * The service's two locks: the bearer token on every request, and on Create Client an
 * X-Signature over the exact raw body bytes. The sandbox must never accept what the real
 * service would refuse, so the comparison is exact (no trimming, no case folding) and the
 * signature is verified over the Buffer received, never over re-serialized JSON.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { UsageError } from '../errors.js';
import { REQUIRED_MODULUS_BITS, type SignatureScheme, verifySignature } from '../service/signing.js';
import type { ErrorSpec } from './respond.js';

export interface AuthState {
  token: string;
  revoked: boolean;
  /** true once authFailAfter creates have happened */
  failing: boolean;
  failStatus: 401 | 403;
}

function unauthenticated(code: string, message: string): ErrorSpec {
  return { status: 401, type: 'authentication_error', code, message };
}

/** undefined when the request may go on. */
export function checkBearer(header: string | undefined, state: AuthState): ErrorSpec | undefined {
  if (header === undefined || header === '') {
    return unauthenticated(
      'api_key_missing',
      "No API key provided: send the header 'Authorization: Bearer <token>' (CCS_TOKEN or --token-file).",
    );
  }
  if (header !== `Bearer ${state.token}`) {
    const shape = /^Bearer \S+$/.test(header)
      ? 'The token is not valid for this service: check CCS_TOKEN / --token-file and the base URL (sandbox and live keys differ).'
      : "Malformed Authorization header: it must be exactly 'Bearer <token>' (one space, no quotes or trailing whitespace).";
    return unauthenticated('api_key_invalid', shape);
  }
  if (state.revoked || (state.failing && state.failStatus === 401)) {
    return unauthenticated(
      'api_key_revoked',
      'This API key has been revoked: ask for a new key and update CCS_TOKEN.',
    );
  }
  if (state.failing) {
    return {
      status: 403,
      type: 'authorization_error',
      code: 'ip_not_allowed',
      message: "This request's IP address is not on the API key's allow-list: check the key's IP allow-list.",
    };
  }
  return undefined;
}

export interface SignatureCheck {
  publicKey: KeyObject;
  scheme: SignatureScheme;
}

export function checkSignature(
  header: string | string[] | undefined,
  body: Buffer,
  check: SignatureCheck,
): ErrorSpec | undefined {
  if (header === undefined || header === '') {
    return unauthenticated(
      'signature_missing',
      'Create Client requires an X-Signature header: base64 of an RSA-4096 signature over the exact request body bytes.',
    );
  }
  if (typeof header !== 'string' || !verifySignature(check.publicKey, body, header, check.scheme)) {
    const { hash, padding } = check.scheme;
    return unauthenticated(
      'signature_invalid',
      `X-Signature does not verify: check that the signing key matches the registered public key, that the scheme is ${hash}/${padding} (--signature-hash, --signature-padding), and that the exact bytes sent were signed.`,
    );
  }
  return undefined;
}

/** The registered public key: PEM (SPKI, or a private key it can be derived from), RSA-4096 only, as the service. */
export function parsePublicKey(pem: string, source = 'the public key'): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (error) {
    throw new UsageError(
      `${source} is not a PEM public key (expected "-----BEGIN PUBLIC KEY-----").`,
      'key_invalid',
      { cause: error },
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (key.asymmetricKeyType !== 'rsa' || bits !== REQUIRED_MODULUS_BITS) {
    throw new UsageError(
      `${source} is ${key.asymmetricKeyType ?? 'unknown'}${bits ? `-${bits}` : ''}; the service accepts only RSA-${REQUIRED_MODULUS_BITS} keys (ccs-bulk keygen makes one).`,
      'key_invalid',
    );
  }
  return key;
}
