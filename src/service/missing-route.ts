/**
 * A 404 or 405 from one of the service's own paths says nothing about the request: nothing
 * serves that operation at this base URL (a gateway's path prefix missing, or one too many).
 * No retry and no other row gets past it, so a run stops on it, naming the URL it called and
 * what to change, instead of failing every row or page one by one.
 */
import { AuthError, ConnectionError, ServiceError } from '../errors.js';

/** The paths of Create Client and List Clients, after the base URL. */
export const CREATE_PATH = '/v1/client';
export const LIST_PATH = '/v1/clients';

export const MISSING_ROUTE_STATUSES: ReadonlySet<number> = new Set([404, 405]);

/** What to change, in one sentence: the base URL, and the command that tests one. */
export const BASE_URL_FIX =
  "--base-url (CCS_BASE_URL) is the service's root, the part before /v1, with the path prefix of the gateway in front of it if there is one " +
  '(https://gw.example.com/ccs); ccs-bulk check tells a wrong path from a refusal';

/**
 * Error types by which the service itself refuses the caller: a 404 carrying one (a key not
 * allowed to list, hidden as "not found") is a refusal of this request, not a missing path.
 */
const REFUSAL_TYPES: ReadonlySet<string> = new Set(['authentication_error', 'authorization_error']);

/** The service answered 404/405: the path, not the request, is wrong. */
export function isMissingRoute(error: unknown): error is ServiceError {
  return (
    error instanceof ServiceError &&
    !(error instanceof AuthError) &&
    error.status !== undefined &&
    MISSING_ROUTE_STATUSES.has(error.status) &&
    !(error.type !== undefined && REFUSAL_TYPES.has(error.type))
  );
}

/** `POST https://host/api/v1/client`: the request as it went out, for the person to compare with the service's documentation. */
export function calledUrl(method: 'GET' | 'POST', baseUrl: string, path: string): string {
  return `${method} ${baseUrl.replace(/\/+$/, '')}${path}`;
}

/**
 * The stop for a path nothing serves. `answered`: which answers, e.g. `404 to the first 20
 * creates`; `error`: one of them, whose message (the service's own words) is quoted; `then`:
 * what the run did about it, when there is more to say.
 */
export function missingRouteError(call: string, operation: 'Create Client' | 'List Clients', answered: string, error: ServiceError, then?: string): ConnectionError {
  const words = error.message.replace(/^\d{3} /, '');
  const said = words.length > 300 ? `${words.slice(0, 300)}…` : words;
  const cause = `${call} answered ${answered} (${said}): the service's ${operation} is not at this base URL${then === undefined ? '' : `; ${then}`}`;
  return new ConnectionError(cause, BASE_URL_FIX, { code: 'endpoint_not_found', cause: error });
}
