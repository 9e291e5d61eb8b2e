/**
 * The export's pager as objects: every client the filters select, once, in created_at order,
 * whatever the service's page base, with pages requested ahead of the caller's loop. The same
 * checks of the filters as exportClients, and the same consistent snapshot: without a
 * `createdTo`, the upper bound is pinned to the instant the listing starts, so clients created
 * meanwhile do not shift the pages being read.
 */
import { StoppedError } from '../errors.js';
import type { ServiceClient } from '../service/client.js';
import type { Client, Direction } from '../service/schemas.js';
import { createWireSlots } from '../service/wire-slots.js';
import { EXPORT_DEFAULTS } from './defaults.js';
import { checkExportSettings } from './options.js';
import { newPagingStats, type PageFilters, pageClients } from './page.js';

/** Which clients listAllClients yields, in what order, and how it pages. */
export interface ListAllClientsOptions {
  /** Only clients in these statuses (`approved`, `pending_review`…): an array or a comma-separated string; default: all. */
  status?: readonly string[] | string | undefined;
  /** Only clients with these credit statuses (`active`, `inactive`); default: all. */
  creditStatus?: readonly string[] | string | undefined;
  /**
   * Inclusive lower bound on created_at: a Date, or text as exportClients' `createdFrom` takes
   * it (`2025-01-01` is its first millisecond, UTC).
   */
  createdFrom?: Date | string | undefined;
  /**
   * Inclusive upper bound on created_at: a Date, or text (`2025-01-31` covers the whole day,
   * UTC). Default: the instant the listing starts, so clients created meanwhile are left out.
   */
  createdTo?: Date | string | undefined;
  /** Order by created_at: asc (default, oldest first) or desc. */
  direction?: Direction | undefined;
  /** Clients per page asked of the service (default 100, at most 1000). */
  pageSize?: number | undefined;
  /** Pages requested ahead of the loop (default 4): more hides more latency, holding more clients in memory. */
  prefetch?: number | undefined;
  /** Aborting ends the loop with a StoppedError (`interrupted`); requests still waiting are not sent. */
  signal?: AbortSignal | undefined;
}

/**
 * Every client the filters select, once each, as `for await (const client of listAllClients(service, { status: 'approved' }))`.
 * The filters are checked at the call (a UsageError `bad_option` naming the option); each loop
 * over the result lists anew. Leaving the loop early (`break`, `return`, a throw) stops the
 * paging: no page is requested after it. A service that repeats pages is met as the export
 * meets it: repeated clients are dropped, a page that loops is a ServiceError.
 */
export function listAllClients(service: ServiceClient, options: ListAllClientsOptions = {}): AsyncIterable<Client> {
  const settings = checkExportSettings(
    {
      status: options.status,
      creditStatus: options.creditStatus,
      createdFrom: boundText(options.createdFrom),
      createdTo: boundText(options.createdTo),
      direction: options.direction,
      pageSize: options.pageSize,
      prefetch: options.prefetch ?? EXPORT_DEFAULTS.startPrefetch,
    },
    'library',
  );
  const prefetch = settings.prefetch === 'auto' ? EXPORT_DEFAULTS.startPrefetch : settings.prefetch;
  return {
    [Symbol.asyncIterator]: () => {
      const filters: PageFilters = {
        direction: settings.direction,
        ...(settings.status && { status: settings.status }),
        ...(settings.creditStatus && { credit_status: settings.creditStatus }),
        ...(settings.createdFrom !== undefined && { 'created_at.from': settings.createdFrom }),
        'created_at.to': settings.createdTo ?? new Date().toISOString(),
      };
      return yieldClients(service, filters, settings.pageSize, prefetch, options.signal);
    },
  };
}

async function* yieldClients(
  service: ServiceClient,
  filters: PageFilters,
  pageSize: number,
  prefetch: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<Client> {
  const pages = pageClients(
    { service, filters, pageSize, prefetch: () => prefetch, wire: createWireSlots(prefetch), signal },
    newPagingStats(pageSize),
  );
  // for await returns the pager when this generator is returned early: its finally closes it.
  for await (const page of pages) {
    for (const client of page.clients) {
      // A page already here would otherwise be yielded to its end after the abort.
      if (signal?.aborted) throw new StoppedError('listing interrupted', 'interrupted', { cause: signal.reason });
      yield client;
    }
  }
}

/** A Date as the instant it is; text as the export reads it. */
function boundText(bound: Date | string | undefined): string | undefined {
  if (!(bound instanceof Date)) return bound;
  // An invalid Date is refused by the export's own check, in its words.
  return Number.isNaN(bound.getTime()) ? 'Invalid Date' : bound.toISOString();
}
