/**
 * check's `create path` line: is Create Client where the base URL says? A request the service
 * must refuse (an empty body, unsigned) goes to it: a refusal (400/401/403/422) proves the
 * operation is there, without creating anything; a 404/405 says nothing serves it at this base
 * URL, which is the one thing an import cannot get past row by row.
 */
import { CREATE_PATH, MISSING_ROUTE_STATUSES, calledUrl } from '../service/missing-route.js';
import { type Answer, type Call, describeError } from './answer.js';
import { type CheckLine, failed, ok, warning } from './types.js';
import type { CheckWords } from './words.js';

/** Answers that refuse the request, not the path: the operation is there. */
const REFUSALS = new Set([400, 401, 403, 409, 415, 422]);

export async function createPathLine(call: Call, baseUrl: string, words: CheckWords): Promise<CheckLine> {
  const url = calledUrl('POST', baseUrl, CREATE_PATH);
  let answer: Answer;
  try {
    answer = await call('POST', CREATE_PATH, { bytes: Buffer.from('{}') });
  } catch (error) {
    return warning('create path', `no answer to ${url}: ${(error as Error).message}`, 'run check again; if it persists, the service or the network is failing');
  }
  return createPathVerdict(answer, url, words);
}

/** What one answer to the unsigned, empty create says of the path. */
export function createPathVerdict(answer: Answer, url: string, words: CheckWords): CheckLine {
  const what = describeError(answer);
  if (MISSING_ROUTE_STATUSES.has(answer.status)) {
    return failed('create path', `${url} answered ${what}: the service's Create Client is not at this base URL`, words.baseUrlFix);
  }
  if (REFUSALS.has(answer.status)) return ok('create path', `${url} is there: an unsigned, empty request was refused (${what})`);
  if (answer.status >= 300 && answer.status < 400) {
    const where = answer.location === undefined ? '' : ` to ${answer.location}`;
    return failed('create path', `${url} answered a redirect${where} (${answer.status}): something other than the service answers there`, words.baseUrlFix);
  }
  if (answer.status >= 200 && answer.status < 300) {
    return failed('create path', `${url} accepted an unsigned, empty request (${answer.status})`, "the service must refuse it: check the base URL, and tell the service's operator");
  }
  return warning('create path', `${url} answered ${what}`, 'run check again; if it persists, the service is failing');
}
