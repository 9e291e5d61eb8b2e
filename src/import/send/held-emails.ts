/**
 * Which people the service already holds, learned before the first row is sent. The service
 * has no e-mail filter, so List Clients is paged (the export's pager: any page base, repeats
 * dropped, never loops) in ascending `created_at`, every client's e-mail kept as a 64-bit print
 * of its identity (row/identity.ts) with where its id is written in the held file
 * (held-file.ts): 12 bytes a slot in memory, whatever the number of clients, and an id is read
 * back only for a row that matches.
 *
 * The held file is kept between runs (a file per service and token in the user's cache folder),
 * with the newest `created_at` each listing saw: a repeat run asks only for clients created since
 * then (less a margin for clients stamped in the same instant; those already written are told
 * apart by their id). Clients created by an earlier run of the same results file are this
 * import's own (`--resume`, a shard): the rows they came from are not `existing`.
 */
import { AuthError, ConnectionError, NetworkError, OutageError, ServiceError, UsageError } from '../../errors.js';
import { PrintTable, type Print, quickPrint } from '../../infra/fingerprints.js';
import { createAdaptiveLimit } from '../../service/adaptive-limit.js';
import type { ServiceClient } from '../../service/client.js';
import { createWireSlots } from '../../service/wire-slots.js';
import { busyPrefetch, newPagingStats, pageClients, pagesAhead } from '../../export/page.js';
import { EXPORT_DEFAULTS } from '../../export/defaults.js';
import type { Held, HeldLookup } from '../row/classify-row.js';
import { emailIdentity, type Person, personPrint } from '../row/identity.js';
import { type HeldFile, openHeldFile } from './held-file.js';

/** Listed again below the newest `created_at` seen: clients the service stamped in the same instant, or a little out of order. */
export const RELIST_MARGIN_MS = 60_000;

/** Where the listing of the service's people stands, before the first row is sent: a snapshot a page. */
export interface ListingProgress {
  /** Clients listed by this run so far. */
  listed: number;
  /** People known in all: from the held file and this listing. */
  known: number;
  /** Pages of clients received so far. */
  pages: number;
  /** Milliseconds since the listing began (reading the held file included). */
  elapsedMs: number;
  /** The listing reached its end: the last snapshot. */
  done: boolean;
}

/** What the run learned of the service's people before its first row: from the held file, and listed now. */
export interface HeldSummary {
  /** The held file, or undefined when kept for this run alone. */
  cache: string | undefined;
  /** Clients read from the held file (earlier runs' listings). */
  fromCache: number;
  /** Clients listed now, and the requests it took. */
  listed: number;
  /** List Clients requests the listing took. */
  requests: number;
  /** Listed from this `created_at` on (undefined: from the beginning). */
  from: string | undefined;
  /** People known in all (the held file's and this listing's). */
  known: number;
  /** People the service holds as more than one client. */
  several: number;
  /** Milliseconds the held file's reading and the listing took. */
  elapsedMs: number;
}

export interface LearnHeldOptions {
  service: ServiceClient;
  /** The held file: a path, or undefined to keep it for this run alone (a temp file, removed at the end). */
  cache: string | undefined;
  /** The service as results files record it: the held file is refused when it names another. */
  serviceIdentity: string;
  /** Client ids an earlier run of this results file created (--resume), as quickPrint prints. */
  own?: PrintTable | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: ListingProgress) => void) | undefined;
  /** Test hook: the listing's page size (default the export's). */
  pageSize?: number | undefined;
}

export class HeldEmails implements HeldLookup {
  readonly #file: HeldFile;
  readonly #table: PrintTable;
  readonly #several = new Map<string, string[]>();
  readonly #own: PrintTable | undefined;

  constructor(file: HeldFile, own: PrintTable | undefined) {
    this.#file = file;
    this.#own = own;
    this.#table = new PrintTable({ values: true, capacity: Math.max(1024, Math.ceil(file.entries * 1.3)) });
  }

  get size(): number {
    return this.#table.size;
  }

  get several(): number {
    return this.#several.size;
  }

  /** Bytes of the print table (the held file's ids stay on disk). */
  get bytes(): number {
    return this.#table.bytes;
  }

  /** A client of this person at `at` in the held file; a second client of the same person is remembered as such. */
  add(person: Print, id: string, at: number): 'new' | 'known' {
    const earlier = this.#table.add(person, at);
    if (earlier === undefined) return 'new';
    const first = this.#file.idAt(earlier >>> 0);
    if (first === id) return 'known';
    const key = `${person.hi}:${person.lo}`;
    const ids = this.#several.get(key) ?? [first];
    if (ids.includes(id)) return 'known';
    ids.push(id);
    this.#several.set(key, ids);
    return 'new';
  }

  get(person: Person): Held | undefined {
    const print = personPrint(person.text);
    const at = this.#table.get(print);
    if (at === undefined) return undefined;
    const ids = this.#several.get(`${print.hi}:${print.lo}`);
    if (ids !== undefined) return { kind: 'several', ids: [...ids].sort() };
    const id = this.#file.idAt(at >>> 0);
    return { kind: 'one', id, own: this.#own?.has(quickPrint(id)) === true };
  }

  close(): void {
    this.#file.close();
  }
}

/**
 * The people the service holds: the held file's, then the clients created since its last
 * listing. A service that refuses the listing, or lists clients without e-mails, stops the run
 * here, before anything is sent.
 */
export async function learnHeldEmails(options: LearnHeldOptions): Promise<{ held: HeldEmails; summary: HeldSummary }> {
  const started = Date.now();
  const file = openHeldFile(options.cache, options.serviceIdentity, options.service.account);
  const held = new HeldEmails(file, options.own);
  try {
    const fromCache = file.load((person, id, at) => held.add(person, id, at));
    const from = file.newest === undefined ? undefined : new Date(Date.parse(file.newest) - RELIST_MARGIN_MS).toISOString();
    const { listed, requests } = await listSince(options, held, file, from, started);
    return {
      held,
      summary: {
        cache: options.cache,
        fromCache,
        listed,
        requests,
        from,
        known: held.size,
        several: held.several,
        elapsedMs: Date.now() - started,
      },
    };
  } catch (error) {
    held.close();
    throw refusal(error, options.service.baseUrl);
  }
}

async function listSince(
  options: LearnHeldOptions,
  held: HeldEmails,
  file: HeldFile,
  from: string | undefined,
  started: number,
): Promise<{ listed: number; requests: number }> {
  const pageSize = options.pageSize ?? EXPORT_DEFAULTS.pageSize;
  const stats = newPagingStats(pageSize);
  const prefetch = createAdaptiveLimit({ limit: 'auto', start: EXPORT_DEFAULTS.startPrefetch, max: EXPORT_DEFAULTS.maxPrefetch });
  const wire = createWireSlots(prefetch.current);
  const unwatch = options.service.watchAnswers((answer) => {
    prefetch.observe(answer, busyPrefetch(stats, wire), { awaiting: wire.held });
    wire.limit = prefetch.current;
  });
  let listed = 0;
  let newest = file.newest;
  const progress = (done: boolean) =>
    options.onProgress?.({ listed, known: held.size, pages: stats.pages, elapsedMs: Date.now() - started, done });
  try {
    const pages = pageClients(
      {
        service: options.service,
        filters: { direction: 'asc', ...(from !== undefined && { 'created_at.from': from }) },
        pageSize,
        prefetch: () => pagesAhead(prefetch.current, true, EXPORT_DEFAULTS.maxPrefetch),
        wire,
        signal: options.signal,
      },
      stats,
    );
    for await (const page of pages) {
      for (const client of page.clients) {
        if (typeof client.email !== 'string' || client.email.trim() === '') throw new NoEmails(client.id);
        const person = personPrint(emailIdentity(client.email));
        if (held.add(person, client.id, file.nextAt) === 'new') file.append(person, client.id);
        if (client.created_at && (newest === undefined || Date.parse(client.created_at) > Date.parse(newest))) newest = client.created_at;
        listed++;
      }
      progress(false);
    }
    // Only a listing that reached its end moves the bound: an interrupted one is listed again.
    file.finish(newest);
    progress(true);
    return { listed, requests: stats.requests };
  } finally {
    unwatch();
  }
}

class NoEmails extends Error {
  constructor(readonly id: string) {
    super(`client ${id} has no e-mail`);
  }
}

/** What stops the run before sending, with the way out named. */
function refusal(error: unknown, baseUrl: string): unknown {
  const wayOut = 'nothing was sent; --identity none imports without the e-mail match (each row is then matched by its idempotency key alone)';
  if (error instanceof NoEmails) {
    return new UsageError(
      `${baseUrl}: List Clients answered a client without an e-mail (${error.id}), so who the service already holds cannot be told: ${wayOut}`,
      'held_listing_refused',
    );
  }
  // The service's answer (a status after retries); network, auth and outage stops keep their own words.
  const answered =
    !(error instanceof NetworkError || error instanceof AuthError || error instanceof ConnectionError || error instanceof OutageError) &&
    (error as ServiceError).code !== 'wait_interrupted';
  if (error instanceof ServiceError && answered) {
    return new UsageError(
      `${baseUrl}: List Clients was refused (${error.message}), so who the service already holds cannot be told: ${wayOut}`,
      'held_listing_refused',
      { cause: error },
    );
  }
  return error;
}
