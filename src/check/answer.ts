/** One answer to one of check's raw requests, and how a line quotes it. */
import { errorBodySchema } from '../service/schemas.js';

export interface Answer {
  status: number;
  date: string | undefined;
  json: unknown;
  /** When the answer arrived (ms since epoch), for the clock line. */
  at: number;
  /** How long the request took, ms. */
  took: number;
  /** Where a redirect pointed, when the answer is one. */
  location?: string | undefined;
}

/** A raw request on check's transport: `body` without `signature` goes unsigned. */
export type Call = (method: 'GET' | 'POST', path: string, body?: { bytes: Buffer; signature?: string | undefined }) => Promise<Answer>;

/** `401 signature_missing: Create Client requires…`: the status and the service's own words. */
export function describeError(answer: Answer): string {
  const parsed = errorBodySchema.safeParse(answer.json);
  if (!parsed.success) return `${answer.status}`;
  const { code, message } = parsed.data.error;
  return `${answer.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
}
