/**
 * Replies in the service's wire format (docs/service.md#envelopes): success envelopes and the error
 * body `{"error": {type, code, message, param, request_id, doc_url, details}}`. Handlers build
 * a Reply (status + JSON text); only server.ts writes it to a socket.
 */
import { randomBytes } from 'node:crypto';

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'authorization_error'
  | 'rate_limit_error'
  | 'api_error';

export interface Reply {
  status: number;
  /** The JSON text to send (built here, so cached client JSON can be spliced in unparsed). */
  payload: string;
  headers?: Record<string, string>;
  /** Ask the client to drop the connection (the request body was not fully read). */
  close?: boolean;
}

export interface ErrorSpec {
  status: number;
  type: ErrorType;
  code: string;
  message: string;
  param?: string | null;
  details?: unknown;
  headers?: Record<string, string>;
}

/** A fake but recognisable documentation host (.invalid never resolves). */
const DOC_BASE = 'https://docs.ccs.invalid/errors#';

export function errorReply(requestId: string, spec: ErrorSpec): Reply {
  const error = {
    type: spec.type,
    code: spec.code,
    message: spec.message,
    param: spec.param ?? null,
    request_id: requestId,
    doc_url: DOC_BASE + spec.code,
    details: spec.details ?? null,
  };
  const reply: Reply = { status: spec.status, payload: JSON.stringify({ error }) };
  if (spec.headers) reply.headers = spec.headers;
  return reply;
}

/** Create and Get Client stamp `timestamp` as epoch milliseconds. */
export function clientReply(status: number, clientJson: string): Reply {
  return { status, payload: `{"status":"success","timestamp":${Date.now()},"data":${clientJson}}` };
}

/** List Clients stamps `timestamp` as an ISO string: the published inconsistency, kept on purpose. */
export function listReply(
  page: number,
  size: number,
  direction: string,
  clientJsons: readonly string[],
): Reply {
  const head = JSON.stringify({ page, size, direction }).slice(0, -1);
  const data = `${head},"clients":[${clientJsons.join(',')}]}`;
  return {
    status: 200,
    payload: `{"status":"success","timestamp":"${new Date().toISOString()}","data":${data}}`,
  };
}

/**
 * Request ids look random (`req_` + 24 hex) but cost a counter increment: a per-sandbox random
 * prefix plus a sequence number keeps per-request work small at 20,000 req/s.
 */
export function createRequestIds(): () => string {
  const prefix = randomBytes(6).toString('hex');
  let sequence = 0;
  return () => {
    sequence = (sequence + 1) % 0x1000000000000;
    return `req_${prefix}${sequence.toString(16).padStart(12, '0')}`;
  };
}
