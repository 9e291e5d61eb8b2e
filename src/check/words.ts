/**
 * The preflight's fixes name settings: the command's in its words (flags, variables), the
 * library's in its (options). Everything else about a check is the same for both.
 */
import type { SignatureScheme } from '../service/signing.js';

export interface CheckWords {
  /** Where the token is set. */
  token: string;
  /** What to do when no signing key was given. */
  keyMissing: string;
  /** What to do when the signing key cannot be used. */
  keyUnusable: string;
  /** The filters that depend on this machine's clock. */
  dateFilters: string;
  /** How to sign with another scheme. */
  useScheme(scheme: SignatureScheme): string;
  /** How to find the scheme the service accepts. */
  detect: string;
  /** What to change when nothing serves the service's paths at the base URL (404/405). */
  baseUrlFix: string;
}

export const CLI_WORDS: CheckWords = {
  token: 'CCS_TOKEN / --token-file',
  keyMissing: 'set CCS_SIGNING_KEY_FILE or --signing-key to the RSA-4096 private key PEM whose public key is registered (ccs-bulk keygen makes a pair)',
  keyUnusable: 'ccs-bulk keygen --out DIR makes an RSA-4096 pair; register its public.pem with the service',
  dateFilters: '--created-from/--created-to',
  useScheme: (scheme) => `use --signature-hash ${scheme.hash} --signature-padding ${scheme.padding}`,
  detect: 'run ccs-bulk check --detect-signature',
  baseUrlFix:
    "set --base-url (CCS_BASE_URL) to the service's root, the part before /v1, with the path prefix of the gateway in front of it if there is one (https://gw.example.com/ccs)",
};

export const LIBRARY_WORDS: CheckWords = {
  token: 'the token option',
  keyMissing:
    'pass signingKeyFile (the PEM file) or signingKey (a KeyObject or the PEM text): the RSA-4096 private key whose public key is registered (generateRsaKeyPair() or ccs-bulk keygen makes a pair)',
  keyUnusable: 'generateRsaKeyPair() (or ccs-bulk keygen --out DIR) makes an RSA-4096 pair; register its public key with the service',
  dateFilters: 'createdFrom/createdTo',
  useScheme: (scheme) => `pass signature: { hash: '${scheme.hash}', padding: '${scheme.padding}' }`,
  detect: 'run checkSetup with detectSignature: true',
  baseUrlFix: "set baseUrl to the service's root, the part before /v1, with the path prefix of the gateway in front of it if there is one (https://gw.example.com/ccs)",
};
