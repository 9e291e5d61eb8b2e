/**
 * One small, closed error family. Every code ccs-bulk raises is in ERROR_CODES with the one
 * class that raises it (docs/errors.md's table is checked against it); each class has one
 * exit code, and only main.ts turns them into exit codes and messages.
 */

/**
 * The CLI's exit status: 0 all done, 1 some rows failed or an export failed, 2 a usage, input or
 * connection set-up problem, 3 the run stopped (auth, interrupted, `maxErrors`, outage, gaps).
 */
export type ExitCode = 0 | 1 | 2 | 3;

/** The name of each class of the error family, as `error.name` reads. */
export type ErrorClassName =
  | 'UsageError'
  | 'InputError'
  | 'ServiceError'
  | 'NetworkError'
  | 'AuthError'
  | 'StoppedError'
  | 'OutputError'
  | 'ConnectionError'
  | 'OutageError';

/** Each class's exit code. */
export const EXIT_CODES = {
  UsageError: 2,
  InputError: 2,
  ServiceError: 1,
  NetworkError: 1,
  AuthError: 3,
  StoppedError: 3,
  OutputError: 1,
  ConnectionError: 2,
  OutageError: 3,
} as const satisfies Record<ErrorClassName, ExitCode>;

/** Every error code, and the class that raises it. */
export const ERROR_CODES = {
  // Before anything is sent: flags, configuration, keys, output paths. Exit 2.
  usage: 'UsageError',
  bad_option: 'UsageError',
  base_url_missing: 'UsageError',
  bad_base_url: 'UsageError',
  insecure_base_url: 'UsageError',
  token_missing: 'UsageError',
  token_unreadable: 'UsageError',
  token_invalid: 'UsageError',
  key_missing: 'UsageError',
  key_unreadable: 'UsageError',
  key_invalid: 'UsageError',
  key_not_rsa: 'UsageError',
  key_size: 'UsageError',
  key_exists: 'UsageError',
  key_write: 'UsageError',
  bad_encoding: 'UsageError',
  bad_delimiter: 'UsageError',
  connection_missing: 'UsageError',
  results_exist: 'UsageError',
  results_foreign: 'UsageError',
  results_unreadable: 'UsageError',
  results_other_service: 'UsageError',
  source_changed: 'UsageError',
  identity_unknown_column: 'UsageError',
  held_listing_refused: 'UsageError',
  held_cache_refused: 'UsageError',
  verify_no_results: 'UsageError',
  verify_results_unmatched: 'UsageError',
  output_unwritable: 'UsageError',
  same_file: 'UsageError',
  output_locked: 'UsageError',
  output_exists: 'UsageError',
  output_link: 'UsageError',
  output_foreign: 'UsageError',
  config_untrusted: 'UsageError',
  config_invalid: 'UsageError',
  report_unknown: 'UsageError',
  state_invalid: 'UsageError',
  state_mismatch: 'UsageError',
  page_size_refused: 'UsageError',
  port_in_use: 'UsageError',
  xlsx_to_terminal: 'UsageError',
  bad_proxy: 'UsageError',
  ca_invalid: 'UsageError',
  client_cert_incomplete: 'UsageError',
  client_cert_invalid: 'UsageError',
  client_key_invalid: 'UsageError',
  client_key_mismatch: 'UsageError',
  file_unreadable: 'UsageError',
  xlsx_too_many_rows: 'UsageError',
  xlsx_cell_too_long: 'UsageError',
  // The input file cannot be used as it is. Exit 2.
  input_missing: 'InputError',
  input_unreadable: 'InputError',
  input_not_file: 'InputError',
  input_empty: 'InputError',
  input_format: 'InputError',
  input_binary: 'InputError',
  input_encoding: 'InputError',
  input_sheet: 'InputError',
  input_xlsx: 'InputError',
  input_protected: 'InputError',
  input_too_large: 'InputError',
  header_row: 'InputError',
  csv_malformed: 'InputError',
  csv_bad_quote: 'InputError',
  csv_unclosed_quote: 'InputError',
  record_too_large: 'InputError',
  missing_columns: 'InputError',
  duplicate_columns: 'InputError',
  map_unknown_header: 'InputError',
  unmapped_field_column: 'InputError',
  results_merge: 'InputError',
  // The service refused or failed a request. A row fails (import), or exit 1 (export).
  service: 'ServiceError',
  bad_response: 'ServiceError',
  response_too_large: 'ServiceError',
  redirect_refused: 'ServiceError',
  invalid_request: 'ServiceError',
  not_sent: 'ServiceError',
  wait_interrupted: 'ServiceError',
  repeated_page: 'ServiceError',
  network: 'NetworkError',
  // Certificate, DNS, proxy, nothing listening, no service at the base URL's paths (404/405): the run stops at once. Exit 2.
  connection: 'ConnectionError',
  endpoint_not_found: 'ConnectionError',
  // The service stayed down past --outage-timeout: the run stops, resumable. Exit 3.
  outage: 'OutageError',
  // 401/403: the run stops. Exit 3.
  auth: 'AuthError',
  // The run stopped before the end. Exit 3.
  interrupted: 'StoppedError',
  max_errors: 'StoppedError',
  // The run ended without every row accounted for or a page: a fault of ccs-bulk); nothing of an export is kept, an import resumes. Exit 3.
  incomplete_run: 'StoppedError',
  systemic_response: 'StoppedError',
  // A results, failed or export file could not be written mid-run. Exit 1.
  output_failed: 'OutputError',
} as const satisfies Record<string, ErrorClassName>;

/** Every stable error code ccs-bulk raises (`max_errors`, `auth`…): a key of `ERROR_CODES`. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes one class (or several) may raise. */
export type CodeOf<C extends ErrorClassName> = {
  [K in ErrorCode]: (typeof ERROR_CODES)[K] extends C ? K : never;
}[ErrorCode];

/**
 * The base of every error ccs-bulk throws on purpose: catch it (or one of its classes) and read
 * `code` to tell the failures apart; the message already says what happened and what to do.
 */
export class CcsError extends Error {
  /** The stable code for this failure (`max_errors`, `auth`…): match on it, not on the message. */
  readonly code: ErrorCode;
  /** The exit status the CLI ends with for this error. */
  readonly exitCode: ExitCode;

  constructor(
    message: string,
    code: ErrorCode,
    exitCode: ExitCode,
    options?: {
      /** The error underneath, kept as `error.cause`. */
      cause?: unknown;
    },
  ) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** A bad flag, a missing token or key, a bad combination of options. Exit 2. */
export class UsageError extends CcsError {
  /** Which usage problem (`bad_option`, `token_missing`, `results_exist`…). */
  declare readonly code: CodeOf<'UsageError'>;

  constructor(
    message: string,
    code: CodeOf<'UsageError'>,
    options?: {
      /** The error underneath, kept as `error.cause`. */
      cause?: unknown;
    },
  ) {
    super(message, code, EXIT_CODES.UsageError, options);
  }
}

/** Unreadable or unusable input: missing file, missing columns, broken CSV. Exit 2. */
export class InputError extends CcsError {
  /** Which input problem (`input_missing`, `missing_columns`, `csv_bad_quote`…). */
  declare readonly code: CodeOf<'InputError'>;
  /** The input file at fault, when there is one. */
  readonly file: string | undefined;
  /** The 1-based line of that file where the problem is, when known. */
  readonly line: number | undefined;

  constructor(
    message: string,
    code: CodeOf<'InputError'>,
    details: {
      /** The input file at fault. */
      file?: string;
      /** The 1-based line of that file where the problem is. */
      line?: number;
      /** The error underneath, kept as `error.cause`. */
      cause?: unknown;
    } = {},
  ) {
    super(message, code, EXIT_CODES.InputError, { cause: details.cause });
    this.file = details.file;
    this.line = details.line;
  }
}

/** The fields of the service's documented error body, plus the HTTP status. */
export interface ServiceErrorDetails {
  /** The HTTP status of the answer. */
  status?: number | undefined;
  /** The error body's `type` (`invalid_request_error`, `api_error`…). */
  type?: string | undefined;
  /** The error body's `code`: the service's own error code. */
  errorCode?: string | undefined;
  /** The error body's `param`: the request field the service objected to. */
  param?: string | undefined;
  /** The error body's `request_id` (or the answer's request-id header): quote it to the service's support. */
  requestId?: string | undefined;
  /** The error body's `doc_url`: the service's page on this error. */
  docUrl?: string | undefined;
  /** The error body's `details`, as the service sent them. */
  details?: unknown;
}

/** The service refused or failed a request (after retries, where retries apply). Exit 1 for a run. */
export class ServiceError extends CcsError {
  /** ccs-bulk's code for the failure (`service`, `network`, `auth`…); the service's own is `errorCode`. */
  declare readonly code: CodeOf<'ServiceError' | 'NetworkError' | 'AuthError' | 'ConnectionError' | 'OutageError'>;
  /** The HTTP status of the last answer; undefined when none came (network failure). */
  readonly status: number | undefined;
  /** The error body's `type` (`invalid_request_error`, `api_error`…), or `network_error` / `outage` for failures without one. */
  readonly type: string | undefined;
  /** The service's own error code (its error body's `code`), when it sent one. */
  readonly errorCode: string | undefined;
  /** The request field the service objected to (its error body's `param`), when it named one. */
  readonly param: string | undefined;
  /** The service's request id: quote it to the service's support. */
  readonly requestId: string | undefined;
  /** The service's page on this error (its error body's `doc_url`), when it sent one. */
  readonly docUrl: string | undefined;
  /** The error body's `details`, as the service sent them. */
  readonly details: unknown;
  /** How many HTTP attempts were made before giving up. */
  attempts = 1;

  constructor(
    message: string,
    info: ServiceErrorDetails = {},
    options?: {
      /** The error underneath, kept as `error.cause`. */
      cause?: unknown;
      /** ccs-bulk's code for the failure; `service` unless given. */
      code?: CodeOf<'ServiceError' | 'NetworkError' | 'AuthError' | 'ConnectionError' | 'OutageError'>;
    },
  ) {
    super(message, options?.code ?? 'service', EXIT_CODES.ServiceError, options);
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
  constructor(
    message: string,
    options?: {
      /** The network error underneath (a system error: `ECONNRESET`…), kept as `error.cause`. */
      cause?: unknown;
    },
  ) {
    super(message, { type: 'network_error' }, { ...options, code: 'network' });
  }
}

/** 401/403: never retried; stops a run. Exit 3. */
export class AuthError extends ServiceError {
  /** 3: the run stopped. */
  override readonly exitCode = EXIT_CODES.AuthError;

  constructor(message: string, info: ServiceErrorDetails = {}) {
    super(message, info, { code: 'auth' });
  }
}

/** A run stopped before the end: interrupted, `maxErrors` reached, a gap in its account, systemic bad answers. Exit 3. */
export class StoppedError extends CcsError {
  /** Why it stopped: `interrupted`, `max_errors`, `incomplete_run` or `systemic_response`. */
  declare readonly code: CodeOf<'StoppedError'>;

  constructor(
    message: string,
    code: CodeOf<'StoppedError'>,
    options?: {
      /** For `interrupted`: the abort signal's reason, kept as `error.cause`. */
      cause?: unknown;
    },
  ) {
    super(message, code, EXIT_CODES.StoppedError, options);
  }
}

/** A results, failed or export file that could not be written mid-run (disk full, reader gone). Exit 1. */
export class OutputError extends CcsError {
  /** Always `output_failed`. */
  declare readonly code: CodeOf<'OutputError'>;

  constructor(
    message: string,
    options?: {
      /** The write error underneath (`ENOSPC`, `EPIPE`…), kept as `error.cause`. */
      cause?: unknown;
    },
  ) {
    super(message, 'output_failed', EXIT_CODES.OutputError, options);
  }
}

/**
 * A failure no retry can fix (certificate, DNS, proxy, nothing listening): the run stops at
 * once, naming the cause and the fix. A configuration problem: exit 2.
 */
export class ConnectionError extends ServiceError {
  /** 2: a set-up problem to fix before running again. */
  override readonly exitCode = EXIT_CODES.ConnectionError;
  /** What to change: a flag or setting, in one sentence. */
  readonly fix: string;

  constructor(
    message: string,
    fix: string,
    options?: {
      /** The network or TLS error underneath, kept as `error.cause`. */
      cause?: unknown;
      /** `connection` unless given: `endpoint_not_found` when the service's path answers 404/405. */
      code?: CodeOf<'ConnectionError'>;
    },
  ) {
    super(`${message}: ${fix}`, { type: 'network_error' }, { cause: options?.cause, code: options?.code ?? 'connection' });
    this.fix = fix;
  }
}

/** The service stayed down longer than the breaker's `outageTimeoutMs` (the CLI's --outage-timeout): the run stops, resumable. Exit 3. */
export class OutageError extends ServiceError {
  /** 3: the run stopped; resume it once the service is back. */
  override readonly exitCode = EXIT_CODES.OutageError;

  constructor(message: string, info: ServiceErrorDetails = {}) {
    super(message, { type: 'outage', ...info }, { code: 'outage' });
  }
}

export function isCcsError(error: unknown): error is CcsError {
  return error instanceof CcsError;
}
