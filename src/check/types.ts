/** One line of the preflight (`ccs-bulk check`, checkSetup): what was checked, how it went, and what to change if it failed. */

/** How one check went: `warning` still lets the setup pass; `skipped` follows a failure that says why. */
export type CheckStatus = 'ok' | 'warning' | 'failed' | 'skipped';

/**
 * The checks, in the order they run: the network (`base URL` … `TLS`), then the service
 * (`token`, `create path`, `page base`, `clock`), the key (`signing key`), and what the service makes of its
 * signatures (`detect` with detectSignature, `signature`).
 */
export type CheckName =
  | 'base URL'
  | 'proxy'
  | 'DNS'
  | 'TCP'
  | 'TLS'
  | 'token'
  | 'create path'
  | 'page base'
  | 'clock'
  | 'signing key'
  | 'detect'
  | 'signature';

/** One check's outcome. */
export interface CheckLine {
  /** Which check. */
  name: CheckName;
  /** How it went. */
  status: CheckStatus;
  /** What was found, in one line: never a token or key material. */
  detail: string;
  /** What to change; present on warnings and failures. */
  fix?: string | undefined;
}

/** The whole preflight: every check, and whether the setup can import. */
export interface CheckReport {
  /** The base URL checked, as given. */
  baseUrl: string;
  /** True when no check failed (warnings allowed): an import can start. */
  ok: boolean;
  /** Every check, in order, skipped ones included. */
  checks: CheckLine[];
  /** With detectSignature (--detect-signature): the schemes the service accepted ("sha256/pkcs1"...). */
  acceptedSchemes?: string[] | undefined;
}

export const ok = (name: CheckName, detail: string): CheckLine => ({ name, status: 'ok', detail });
export const warning = (name: CheckName, detail: string, fix: string): CheckLine => ({ name, status: 'warning', detail, fix });
export const failed = (name: CheckName, detail: string, fix: string): CheckLine => ({ name, status: 'failed', detail, fix });
export const skipped = (name: CheckName, detail: string): CheckLine => ({ name, status: 'skipped', detail });
