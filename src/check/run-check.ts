/**
 * The preflight: network (base URL, proxy, DNS, TCP, TLS), then the service (token, create
 * path, page base, clock, signature) once it can be reached, and the signing key either way. Returns the
 * report; the command prints it, the library returns it (checkSetup).
 */
import { CcsError } from '../errors.js';
import type { SignatureScheme } from '../service/signing.js';
import type { NetworkSettings } from '../service/dispatcher.js';
import { checkBaseUrl } from '../service/url.js';
import { checkSigningKey, type SigningKeySource } from './key.js';
import { checkNetwork } from './network.js';
import { checkService } from './service.js';
import { type CheckLine, type CheckReport, failed, skipped } from './types.js';
import type { CheckWords } from './words.js';

export interface CheckOptions {
  baseUrl: string;
  token: string;
  signingKey: SigningKeySource | undefined;
  /** Why there is none, when a variable was set but empty. */
  signingKeyNote?: string | undefined;
  scheme: SignatureScheme;
  network: NetworkSettings;
  /** Where the extra CAs came from, for the TLS line. */
  caFiles: readonly string[];
  timeoutMs: number;
  detectSignature: boolean;
  /** The settings the fixes name: the command's flags or the library's options. */
  words: CheckWords;
}

export async function runChecks(options: CheckOptions): Promise<CheckReport> {
  const key = await checkSigningKey(options.signingKey, options.words, options.signingKeyNote);
  let base: URL;
  try {
    base = checkBaseUrl(options.baseUrl);
  } catch (error) {
    // The command refused it while resolving its options; a caller of the library learns it here.
    if (!(error instanceof CcsError)) throw error;
    const why = 'not checked (the base URL cannot be used)';
    const checks: CheckLine[] = [
      failed('base URL', error.message, "give the service's root over https:// (http:// only to a loopback host such as the sandbox)"),
      ...(['proxy', 'DNS', 'TCP', 'TLS', 'token', 'create path', 'page base', 'clock'] as const).map((name) => skipped(name, why)),
      key.line,
      skipped('signature', why),
    ];
    return report(options.baseUrl, checks, undefined);
  }
  const reached = await checkNetwork({ base, network: options.network, caFiles: options.caFiles, timeoutMs: options.timeoutMs });
  const checks: CheckLine[] = [...reached.lines];
  if (reached.reachable) {
    const service = await checkService({
      base,
      token: options.token,
      network: options.network,
      proxy: reached.proxy,
      timeoutMs: options.timeoutMs,
      key: key.key,
      scheme: options.scheme,
      detectSignature: options.detectSignature,
      words: options.words,
    });
    // The key line goes before the signature it is used for.
    const at = service.lines.findIndex((line) => line.name === 'signature' || line.name === 'detect');
    service.lines.splice(at === -1 ? service.lines.length : at, 0, key.line);
    checks.push(...service.lines);
    return report(options.baseUrl, checks, service.acceptedSchemes);
  }
  const why = 'not checked (the service cannot be reached)';
  checks.push(skipped('token', why), skipped('create path', why), skipped('page base', why), skipped('clock', why), key.line, skipped('signature', why));
  return report(options.baseUrl, checks, undefined);
}

function report(baseUrl: string, checks: CheckLine[], acceptedSchemes: string[] | undefined): CheckReport {
  // A line skipped after a failure leaves that failure to say so; one skipped alone (no Date header) is harmless.
  const ok = checks.every((line) => line.status !== 'failed');
  return { baseUrl, ok, checks, ...(acceptedSchemes !== undefined && { acceptedSchemes }) };
}
