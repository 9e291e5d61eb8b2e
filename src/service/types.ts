/** What a request to the service yields and reports: its reply, and an event per attempt and retry. */

export interface Timeouts {
  /** Longest wait for a connection (TCP and TLS), ms. */
  connectMs: number;
  /** Longest wait for the response headers once the request is sent, ms. */
  headersMs: number;
  /** Longest wait for the response body, ms. */
  bodyMs: number;
}

export interface RetryEvent {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** The wait before the next attempt, ms (Retry-After when the service sent one). */
  delayMs: number;
  /** The HTTP status that is retried; undefined for a network error or timeout. */
  status?: number | undefined;
  /** Why the attempt is retried, in words (`429`, `503`, `ECONNRESET`, `timeout`…). */
  reason: string;
}

/** One attempt's answer, for `--concurrency auto`: its HTTP status (none: network error or timeout) and time on the wire. */
export interface Answer {
  /** The HTTP status; undefined for a network error or timeout. */
  status: number | undefined;
  /** Time on the wire, ms. */
  ms: number;
}

/** One request attempt, for audit logs: no header, body or token, only what happened. */
export interface AttemptEvent {
  /** The HTTP method. */
  method: 'GET' | 'POST';
  /** The path without its query. */
  path: string;
  /** List Clients: the page asked for. */
  page: number | undefined;
  /** Create Client: the input's row number, when the caller gave it. */
  row: number | undefined;
  /** 1 for the first attempt, then counting retries. */
  attempt: number;
  /** HTTP status; undefined when no response came (network error). */
  status: number | undefined;
  /** Time from sending to the answer (or the failure), ms. */
  latencyMs: number;
  /** The service's request id (x-request-id), when it sent one. */
  requestId: string | undefined;
  /** The error code when the attempt failed. */
  error: string | undefined;
}

/** A successful answer, parsed. */
export interface Reply<T> {
  /** The response's `data`, checked against the service's schema. */
  data: T;
  /** The HTTP status (200 or 201). */
  status: number;
  /** Attempts it took, retries included. */
  attempts: number;
  /** The service's request id (x-request-id), for support. */
  requestId: string | undefined;
  /** The answer's Date header, and when it arrived (ms since epoch): the service's clock against ours. */
  date?: string | undefined;
  /** When the answer arrived, ms since the epoch. */
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
