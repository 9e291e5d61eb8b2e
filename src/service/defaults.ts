/**
 * The service client's defaults, shared by the commands' flags (cli.ts) and
 * createServiceClient. No imports with a cost: cli.ts loads this for `--help`.
 */

/** The service client's defaults: connections, timeouts, retries, the outage timeout, the signature scheme. */
export const SERVICE_DEFAULTS = {
  /** Keep-alive connections; also the import's requests in flight. */
  connections: 8,
  connectTimeoutMs: 10_000,
  /** Per response: for its headers, then for its body. */
  timeoutMs: 30_000,
  /** Seconds the service may stay down mid-run (the run pauses) before the run stops. */
  outageTimeoutS: 600,
  /** Retries after the first attempt. */
  retries: 5,
  /**
   * docs/service.md#signing: not published; PKCS#1 v1.5 with SHA-256 by default. Typed as a
   * SignatureScheme where signing.ts takes it (DEFAULT_SCHEME), so this file imports nothing.
   */
  scheme: { hash: 'sha256', padding: 'pkcs1' } as const,
  /** docs/service.md#create-client: the application date's wire name is not published. */
  applicationDateField: 'application_date',
} as const;
