/** The preflight from code: the checks `ccs-bulk check` prints, returned as data. */
import type { KeyObject } from 'node:crypto';
import { UsageError } from '../errors.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';
import type { NetworkSettings } from '../service/dispatcher.js';
import { DEFAULT_SCHEME, type SignatureScheme } from '../service/signing.js';
import { runChecks } from './run-check.js';
import type { CheckReport } from './types.js';
import { LIBRARY_WORDS } from './words.js';

/** The settings an import would run with, as checkSetup checks them. */
export interface CheckSetupOptions {
  /** The service's root, as createServiceClient takes it; one it would refuse is a failed `base URL` check. */
  baseUrl: string;
  /** The API token; never shown in the report. */
  token: string;
  /** The signing key's PEM file, checked as loadSigningKey checks it (its mode too). */
  signingKeyFile?: string | undefined;
  /** The signing key itself: a KeyObject, or the PEM text (from an environment variable, say). */
  signingKey?: KeyObject | string | undefined;
  /** The hash and padding to sign with, as given to createSigner (default sha256/pkcs1). */
  signature?: SignatureScheme | undefined;
  /** Sign with every scheme too and report those the service accepts (`acceptedSchemes`). */
  detectSignature?: boolean | undefined;
  /** Proxy and TLS settings, as createServiceClient takes them. */
  network?: NetworkSettings | undefined;
  /** How long each step may take, in ms: DNS, connecting, each request (default 30 000). */
  timeoutMs?: number | undefined;
}

/**
 * Checks a setup before an import, from the network to the signature, as `ccs-bulk check`
 * does: base URL, proxy, DNS, TCP, TLS, token, create path, page base, clock, signing key,
 * signature. It
 * creates nothing and prints nothing; every finding is a line of the report, `ok` when none
 * failed. It rejects only when the options contradict themselves (UsageError `bad_option`).
 */
export async function checkSetup(options: CheckSetupOptions): Promise<CheckReport> {
  const { signingKey, signingKeyFile } = options;
  if (signingKey !== undefined && signingKeyFile !== undefined) {
    throw new UsageError('checkSetup takes signingKey or signingKeyFile, not both', 'bad_option');
  }
  const network = options.network ?? {};
  return runChecks({
    baseUrl: options.baseUrl,
    token: options.token,
    signingKey: signingKey !== undefined ? { key: signingKey } : signingKeyFile !== undefined ? { file: signingKeyFile } : undefined,
    scheme: options.signature ?? DEFAULT_SCHEME,
    network,
    caFiles: network.tls?.ca !== undefined ? ['network.tls.ca'] : [],
    timeoutMs: options.timeoutMs ?? SERVICE_DEFAULTS.timeoutMs,
    detectSignature: options.detectSignature === true,
    words: LIBRARY_WORDS,
  });
}
