/**
 * The preflight: network (base URL, proxy, DNS, TCP, TLS), then the service (token, page
 * base, clock, signature) once it can be reached, and the signing key either way. Returns the
 * report; the command prints it.
 */
import type { SignatureScheme } from '../service/signing.js';
import type { NetworkSettings } from '../service/dispatcher.js';
import { checkBaseUrl } from '../service/url.js';
import { checkSigningKey } from './key.js';
import { checkNetwork } from './network.js';
import { checkService } from './service.js';
import { type CheckLine, type CheckReport, skipped } from './types.js';

export interface CheckOptions {
  baseUrl: string;
  token: string;
  signingKeyFile: string | undefined;
  /** Why there is none, when a variable was set but empty. */
  signingKeyNote?: string | undefined;
  scheme: SignatureScheme;
  network: NetworkSettings;
  caFiles: readonly string[];
  timeoutMs: number;
  detectSignature: boolean;
}

export async function runChecks(options: CheckOptions): Promise<CheckReport> {
  const base = checkBaseUrl(options.baseUrl);
  const reached = await checkNetwork({ base, network: options.network, caFiles: options.caFiles, timeoutMs: options.timeoutMs });
  const { line: keyLine, key } = await checkSigningKey(options.signingKeyFile, options.signingKeyNote);
  const checks: CheckLine[] = [...reached.lines];
  if (reached.reachable) {
    const service = await checkService({
      base,
      token: options.token,
      network: options.network,
      proxy: reached.proxy,
      timeoutMs: options.timeoutMs,
      key,
      scheme: options.scheme,
      detectSignature: options.detectSignature,
    });
    // The key line goes before the signature it is used for.
    const at = service.lines.findIndex((line) => line.name === 'signature' || line.name === 'detect');
    service.lines.splice(at === -1 ? service.lines.length : at, 0, keyLine);
    checks.push(...service.lines);
    return report(options.baseUrl, checks, service.acceptedSchemes);
  }
  const why = 'not checked (the service cannot be reached)';
  checks.push(skipped('token', why), skipped('page base', why), skipped('clock', why), keyLine, skipped('signature', why));
  return report(options.baseUrl, checks, undefined);
}

function report(baseUrl: string, checks: CheckLine[], acceptedSchemes: string[] | undefined): CheckReport {
  // A line skipped after a failure leaves that failure to say so; one skipped alone (no Date header) is harmless.
  const ok = checks.every((line) => line.status !== 'failed');
  return { baseUrl, ok, checks, ...(acceptedSchemes !== undefined && { acceptedSchemes }) };
}
