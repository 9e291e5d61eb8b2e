/** What a request to the service yields and reports: its reply, and an event per attempt and retry. */

export interface Timeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
}

export interface RetryEvent {
  attempt: number;
  delayMs: number;
  status?: number | undefined;
  reason: string;
}

/** One attempt's answer, for `--concurrency auto`: its HTTP status (none: network error or timeout) and time on the wire. */
export interface Answer {
  status: number | undefined;
  ms: number;
}

/** One request attempt, for audit logs: no header, body or token, only what happened. */
export interface AttemptEvent {
  method: 'GET' | 'POST';
  /** The path without its query. */
  path: string;
  /** List Clients: the page asked for. */
  page: number | undefined;
  /** Create Client: the input's row number, when the caller gave it. */
  row: number | undefined;
  attempt: number;
  /** HTTP status; undefined when no response came (network error). */
  status: number | undefined;
  latencyMs: number;
  requestId: string | undefined;
  /** The error code when the attempt failed. */
  error: string | undefined;
}

export interface Reply<T> {
  data: T;
  status: number;
  attempts: number;
  requestId: string | undefined;
  /** The answer's Date header, and when it arrived (ms since epoch): the service's clock against ours. */
  date?: string | undefined;
  receivedAt?: number | undefined;
}

/** What the caller knows of a request, copied into its attempts' AttemptEvents. */
export interface RequestContext {
  /** The input's row number (import). */
  row?: number | undefined;
  /** The wire slot the request holds (import's send window, export's pages): lent while it waits. */
  slot?: WireSlot | undefined;
}

/**
 * A place among the requests the send window lets on the wire. A request waiting (a retry's
 * delay, a 429's pause, an outage) gives it back, so the limit counts what is on the wire;
 * a limit cut after it was taken sends it back to the queue before the next attempt.
 */
export interface WireSlot {
  /** Held, and within the limit in force now. */
  fits(): boolean;
  /** Gives it back while the request waits; nothing if not held. */
  leave(): void;
  /** Takes one again (ahead of rows not yet sent); at once if held and within the limit. */
  enter(): Promise<void>;
}
