/** One line of `ccs-bulk check`: what was checked, how it went, and what to change if it failed. */

export type CheckStatus = 'ok' | 'warning' | 'failed' | 'skipped';

export interface CheckLine {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to change; present on warnings and failures. */
  fix?: string | undefined;
}

export interface CheckReport {
  baseUrl: string;
  /** True when no line failed (warnings allowed). */
  ok: boolean;
  checks: CheckLine[];
  /** With --detect-signature: the schemes the service accepted ("sha256/pkcs1"...). */
  acceptedSchemes?: string[] | undefined;
}

export const ok = (name: string, detail: string): CheckLine => ({ name, status: 'ok', detail });
export const warning = (name: string, detail: string, fix: string): CheckLine => ({ name, status: 'warning', detail, fix });
export const failed = (name: string, detail: string, fix: string): CheckLine => ({ name, status: 'failed', detail, fix });
export const skipped = (name: string, detail: string): CheckLine => ({ name, status: 'skipped', detail });
