/**
 * Was a `created` row's client already on the service before this run? Create Client answers
 * 200 for a new client and for one replayed under the same key alike; only its `created_at`
 * tells them apart. That time is on the service's clock, so the run's start is moved onto it
 * with the offset each answer's Date header shows (as `ccs-bulk check` measures the clock).
 * The Date header has whole seconds and is stamped before the answer travels back, so the
 * estimate can be up to half a second late or a little more early; a margin keeps every
 * client created during this run out of `existing` (a replay of one created in the second
 * before the run may count as created). No Date header or no created_at: not claimed.
 */
import type { Reply } from '../../service/client.js';
import type { Client } from '../../service/schemas.js';

export const EXISTING_MARGIN_MS = 1500;

export function heldBeforeRun(runStartedMs: number, reply: Reply<Client>): boolean {
  const created = Date.parse(reply.data.created_at ?? '');
  const served = Date.parse(reply.date ?? '');
  if (Number.isNaN(created) || Number.isNaN(served) || reply.receivedAt === undefined) return false;
  // Ours minus the service's, taking the Date header's second at its middle.
  const offset = reply.receivedAt - (served + 500);
  return created < runStartedMs - offset - EXISTING_MARGIN_MS;
}
