/**
 * One pass over List Clients (export's pager: any page base, repeats dropped), every client
 * created in the window, up to the run's start when no upper bound is given: a client created
 * while verify runs is not part of what it proves. Each client becomes prints (ServicePrints);
 * one that no results line claims is an unexplained client, reported as it arrives.
 */
import { StoppedError } from '../errors.js';
import { newPagingStats, pageClients } from '../export/page.js';
import { EXPORT_DEFAULTS } from '../export/defaults.js';
import type { ServiceClient } from '../service/client.js';
import type { Client } from '../service/schemas.js';
import type { ServicePrints } from './service-prints.js';

export interface ListingOptions {
  service: ServiceClient;
  createdFrom: string | undefined;
  createdTo: string | undefined;
  pageSize: number;
  prints: ServicePrints;
  /** Count people by e-mail (identity email): a row's person on the service twice. */
  byEmail: boolean;
  onUnexplained: (client: Client) => void;
  signal?: AbortSignal | undefined;
  /** After each page. */
  onPage?: (() => void) | undefined;
}

/** What the evidence says of the listing. */
export interface ListingFacts {
  /** Inclusive lower bound sent (ISO instant); null: none. */
  createdFrom: string | null;
  /** Inclusive upper bound sent (ISO instant). */
  createdTo: string;
  /** The upper bound was the run's start, not a flag. */
  toIsRunStart: boolean;
  /** Clients listed, repeats dropped. */
  clients: number;
  /** Pages read. */
  pages: number;
  /** Requests sent, retries included. */
  requests: number;
  /** The first page's number as the service counts (0 or 1); null: no page read. */
  pageBase: 0 | 1 | null;
  /** Clients per page asked for. */
  pageSize: number;
  /** Repeats the pager dropped (the listing shifted between pages). */
  repeatsDropped: number;
}

export async function listService(options: ListingOptions): Promise<ListingFacts> {
  const createdTo = options.createdTo ?? new Date().toISOString();
  const stats = newPagingStats(options.pageSize);
  const filters = {
    direction: 'asc' as const,
    ...(options.createdFrom !== undefined && { 'created_at.from': options.createdFrom }),
    'created_at.to': createdTo,
  };
  const pages = pageClients(
    { service: options.service, filters, pageSize: options.pageSize, prefetch: () => EXPORT_DEFAULTS.startPrefetch, signal: options.signal },
    stats,
  );
  try {
    for await (const page of pages) {
      for (const client of page.clients) {
        if (!options.prints.list(client, options.byEmail)) options.onUnexplained(client);
      }
      options.onPage?.();
    }
  } catch (error) {
    // The pager is export's, and says so when Ctrl-C stops it.
    if (error instanceof StoppedError && error.code === 'interrupted') throw new StoppedError('verify interrupted', 'interrupted');
    throw error;
  }
  return {
    createdFrom: options.createdFrom ?? null,
    createdTo,
    toIsRunStart: options.createdTo === undefined,
    clients: options.prints.listed,
    pages: stats.pages,
    requests: stats.requests,
    pageBase: stats.pageBase ?? null,
    pageSize: stats.pageSize,
    repeatsDropped: stats.duplicates,
  };
}
