/**
 * One small error family. Each error has a stable `code` and the exit code SPEC.md gives it;
 * only main.ts turns them into exit codes and messages. Expected failures never show a stack.
 */

export type ExitCode = 0 | 1 | 2 | 3;

export class CcsError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;

  constructor(message: string, code: string, exitCode: ExitCode, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** A bad flag, a missing token or key, a bad combination of options. Exit 2. */
export class UsageError extends CcsError {
  constructor(message: string, code = 'usage', options?: { cause?: unknown }) {
    super(message, code, 2, options);
  }
}

/** Unreadable or unusable input: missing file, missing columns, broken CSV. Exit 2. */
export class InputError extends CcsError {
  readonly file: string | undefined;
  readonly line: number | undefined;

  constructor(
    message: string,
    code = 'input',
    details: { file?: string; line?: number; cause?: unknown } = {},
  ) {
    super(message, code, 2, { cause: details.cause });
    this.file = details.file;
    this.line = details.line;
  }
}

/** The fields of the service's documented error body, plus the HTTP status. */
export interface ServiceErrorDetails {
  status?: number | undefined;
  type?: string | undefined;
  errorCode?: string | undefined;
  param?: string | undefined;
  requestId?: string | undefined;
  docUrl?: string | undefined;
  details?: unknown;
}

/** The service refused or failed a request (after retries, where retries apply). Exit 1 for a run. */
export class ServiceError extends CcsError {
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly errorCode: string | undefined;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  readonly docUrl: string | undefined;
  readonly details: unknown;
  /** How many HTTP attempts were made before giving up. */
  attempts = 1;

  constructor(message: string, info: ServiceErrorDetails = {}, options?: { cause?: unknown; code?: string }) {
    super(message, options?.code ?? 'service', 1, options);
    this.status = info.status;
    this.type = info.type;
    this.errorCode = info.errorCode;
    this.param = info.param;
    this.requestId = info.requestId;
    this.docUrl = info.docUrl;
    this.details = info.details;
  }
}

/** The network failed (refused, reset, timeout) and retries ran out. */
export class NetworkError extends ServiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { type: 'network_error' }, { ...options, code: 'network' });
  }
}

/** 401/403: never retried; stops a run. Exit 3. */
export class AuthError extends ServiceError {
  override readonly exitCode = 3 as const;

  constructor(message: string, info: ServiceErrorDetails = {}) {
    super(message, info, { code: 'auth' });
  }
}

/** A run stopped before the end: interrupted, or --max-errors reached. Exit 3. */
export class StoppedError extends CcsError {
  constructor(message: string, code = 'stopped') {
    super(message, code, 3);
  }
}

/**
 * A failure no retry can fix (certificate, DNS, proxy, nothing listening): the run stops at
 * once, naming the cause and the fix. A configuration problem: exit 2.
 */
export class ConnectionError extends ServiceError {
  override readonly exitCode = 2 as const;
  /** What to change: a flag or setting, in one sentence. */
  readonly fix: string;

  constructor(message: string, fix: string, options?: { cause?: unknown }) {
    super(`${message}: ${fix}`, { type: 'network_error' }, { ...options, code: 'connection' });
    this.fix = fix;
  }
}

/** The service stayed down longer than --outage-timeout: the run stops, resumable. Exit 3. */
export class OutageError extends ServiceError {
  override readonly exitCode = 3 as const;

  constructor(message: string, info: ServiceErrorDetails = {}) {
    super(message, { type: 'outage', ...info }, { code: 'outage' });
  }
}

export function isCcsError(error: unknown): error is CcsError {
  return error instanceof CcsError;
}
