/**
 * Pages through List Clients whatever the server's page base, yielding each page's clients not
 * written before, in order, with up to `prefetch()` pages requested ahead of the writer (read at
 * every top-up: `--prefetch auto` changes it while the export runs) and at most `wire.limit` of
 * them on the wire.
 *
 * Page numbering is not published (docs/service.md#paging), so:
 * - start at page 0; a 400/422 about `page` (or with no param) means "1-based", restart at 1;
 *   an empty page 0 is checked against page 1, for servers that answer 0 with nothing;
 * - a page 1 identical to page 0 is a 1-based server serving page 0 as its first page: skipped;
 * - the end is the first empty or short page; pages prefetched past it are discarded (they are
 *   GETs, harmless), and their errors with them;
 * - a page with the same ids as an earlier one, or pages that keep bringing nothing new, fail
 *   loudly (ServiceError, exit 1) instead of looping forever;
 * - a repeated id is yielded once: one the listing shifted onto a neighbouring page is dropped;
 *   memory stays flat (SeenPages: recent pages' ids, 64-bit prints of the others).
 */
import { AuthError, ServiceError, StoppedError, UsageError } from '../errors.js';
import { type Print, PrintTable, quickPrint } from '../infra/fingerprints.js';
import type { ServiceClient } from '../service/client.js';
import { calledUrl, isMissingRoute, LIST_PATH, missingRouteError } from '../service/missing-route.js';
import { createWireSlots, type WireSlots } from '../service/wire-slots.js';
import type { Client, ListClientsQuery, ListPage } from '../service/schemas.js';

export type PageFilters = Omit<ListClientsQuery, 'page' | 'size'>;

export interface PageClientsOptions {
  service: ServiceClient;
  filters: PageFilters;
  pageSize: number;
  /** Pages requested ahead of the writer, at most: on the wire, waiting for a place on it, or arrived. */
  prefetch: () => number;
  /**
   * The page requests' places on the wire: one is held while its request is on the wire and lent
   * while it waits to retry. Default: as many as `prefetch()` allows.
   */
  wire?: WireSlots | undefined;
  signal?: AbortSignal | undefined;
  /**
   * What a page keeps of each client from the moment it arrives (`--new-since-last`: the id
   * alone of a client already reported), so the pages prefetched ahead of the writer hold a few
   * bytes for each client the run will skip, not the whole client.
   */
  slim?: ((client: Client) => Client) | undefined;
}

export interface FetchedPage {
  /** The page number as sent. */
  number: number;
  /** The clients of this page whose id was not yielded before, in the server's order. */
  clients: Client[];
  /** Clients in the reply, repeats included. */
  received: number;
}

/** Live counters, filled in as pages arrive (the summary reads them, even after a failure). */
export interface PagingStats {
  pageBase: 0 | 1 | undefined;
  /** The page size in force: the one asked for, or smaller if the server says so. */
  pageSize: number;
  pages: number;
  requests: number;
  /** Clients dropped because their id had already been written. */
  duplicates: number;
  /**
   * Clients written although their id's 64-bit print matched one written on an older page:
   * another id with the same print, or a repeat from further back than the pager keeps ids.
   */
  unverified: number;
  /** Pages requested and not answered yet: on the wire, or waiting for a place on it. */
  inFlight: number;
  /** True while the writer waits for the next page: the network, not the writer, is behind. */
  waiting: boolean;
  /** The documented end: the number of the first short or empty page, once it arrived. */
  endPage: number | undefined;
}

/** Full pages in a row that bring no new id before the server is declared broken. */
const MAX_STALE_PAGES = 3;

type Settled = { ok: true; page: ListPage } | { ok: false; error: unknown };

export function newPagingStats(pageSize: number): PagingStats {
  return { pageBase: undefined, pageSize, pages: 0, requests: 0, duplicates: 0, unverified: 0, inFlight: 0, waiting: false, endPage: undefined };
}

/**
 * Prefetch slots busy, for `--prefetch auto`: while the writer waits for a page, the page
 * requests on the wire. While the writer is busy (disk, xlsx encoding) none count, so a slow
 * writer never grows it.
 */
export function busyPrefetch(stats: PagingStats, wire: WireSlots): number {
  return stats.waiting ? wire.held : 0;
}

/**
 * Pages requested ahead of the writer for a limit of `limit` on the wire: in `--prefetch auto`
 * twice that (at most `max`), a pinned `--prefetch N` N. Answers come out of order (a round
 * trip's jitter), and with no more pages ahead than places on the wire, each page that arrived
 * before the one awaited left a place empty: 0.33–0.84 of the floor at 150–500 ms in the
 * export's simulation (docs/export.md), where twice the limit meets 0.9 in every cell.
 */
export function pagesAhead(limit: number, auto: boolean, max: number): number {
  return auto ? Math.min(max, 2 * limit) : limit;
}

export async function* pageClients(
  options: PageClientsOptions,
  stats: PagingStats,
): AsyncGenerator<FetchedPage> {
  const { pageSize, prefetch, signal } = options;
  const requests = pageRequests(options, stats);
  const fetchPage = requests.fetch;
  const pending = new Map<number, Promise<Settled>>();
  try {
    // The first page, alone: it decides the base and the page size everything else uses.
    let base: 0 | 1 = 0;
    let first: ListPage;
    try {
      first = await abortable(fetchPage(0), signal);
    } catch (error) {
      // No List Clients at this base URL: said once, with the URL and the fix (exit 2).
      if (isMissingRoute(error)) throw missingRouteError(calledUrl('GET', options.service.baseUrl, LIST_PATH), 'List Clients', String(error.status), error);
      if (!refusesPageZero(error)) throw error;
      base = 1;
      first = await abortable(fetchPage(1), signal);
    }
    if (base === 0 && first.clients.length === 0) {
      const probe = await abortable(fetchPage(1), signal);
      if (probe.clients.length > 0) [base, first] = [1, probe];
    }
    stats.pageBase = base;
    // A server that caps the size without refusing says so in `size`; trusting the asked size
    // would take its first (capped) page for a short last page and end the export early.
    if (first.size >= 1 && first.size < pageSize) stats.pageSize = first.size;

    const seen = new SeenPages();
    let requested = base + 1;
    const topUp = (upTo: number) => {
      for (; requested <= upTo; requested++) {
        pending.set(
          requested,
          fetchPage(requested).then(
            (page): Settled => ({ ok: true, page }),
            (error: unknown): Settled => ({ ok: false, error }),
          ),
        );
      }
    };

    let page = first;
    let number = base;
    for (;;) {
      const isLast = page.clients.length < stats.pageSize;
      // Before handing the page over, so the next pages load while this one is written.
      if (!isLast) topUp(number + prefetch());
      const verdict = seen.accept(number, page.clients, base, stats);
      if (verdict === 'clamped') stats.pageBase = 1;
      else if (verdict.received > 0) {
        stats.pages++;
        yield verdict;
      }
      if (isLast) {
        stats.endPage = number;
        return;
      }
      // Prefetched pages may all be ready: the wait below would not notice the abort.
      if (signal?.aborted) throw interrupted();
      number++;
      topUp(number + prefetch() - 1);
      stats.waiting = true;
      const settled = await abortable(pending.get(number)!, signal).finally(() => {
        stats.waiting = false;
      });
      pending.delete(number);
      if (!settled.ok) throw settled.error;
      page = settled.page;
    }
  } finally {
    // Every pending promise already has its rejection handled: dropping them is safe.
    requests.close();
    pending.clear();
  }
}

/**
 * Page requests, each on one of the wire's places (held on the wire, lent while it waits to
 * retry). Once closed (the end, an error, the writer stopped), pages still waiting for a place
 * are not sent.
 */
function pageRequests(options: PageClientsOptions, stats: PagingStats) {
  const { service, filters, pageSize, slim } = options;
  const wire = options.wire ?? createWireSlots(Number.MAX_SAFE_INTEGER);
  let closed = false;
  const request = async (page: number): Promise<ListPage> => {
    const slot = await wire.take();
    try {
      if (closed) throw interrupted();
      stats.requests++;
      const reply = await service.listClients({ ...filters, page, size: pageSize }, { slot });
      return slim ? { ...reply.data, clients: reply.data.clients.map(slim) } : reply.data;
    } finally {
      slot.leave();
    }
  };
  return {
    fetch(page: number): Promise<ListPage> {
      stats.inFlight++;
      return request(page).then(
        (data) => {
          stats.inFlight--;
          return data;
        },
        (error: unknown) => {
          stats.inFlight--;
          throw explain(error, pageSize);
        },
      );
    },
    close() {
      closed = true;
    },
  };
}

/**
 * Pages whose ids are kept exactly, to drop repeats. A repeat comes from the listing shifting
 * between two requests (clients entering or leaving the filter ahead of the page read): a
 * shift of k clients repeats up to k ids across neighbouring pages, so the last few pages hold
 * them unless more than (RECENT_PAGES − 1) pages' worth entered the filter between two pages
 * being served.
 */
const RECENT_PAGES = 4;

/**
 * The ids written so far, a digest of every page's id set, to tell repeats from progress.
 * Memory stays flat whatever the export's size: the last RECENT_PAGES pages' ids exactly, every
 * id as a quick 64-bit print (10–20 bytes a client, fingerprints.ts), and a digest per page.
 * A repeat is dropped only when its id is among the recent pages' ids: a client whose print
 * matches an older page is written (a 64-bit twin of another id, ~2.7·10⁻⁸ for a million, or
 * a repeat from further back than the shifts above) and counted in `stats.unverified`; it
 * is never dropped on a print alone.
 *
 * An id whose print is new cannot be a repeat (every id of the recent pages has its print in
 * the table), so the exact ids are only looked up, in a set made when first needed, for the
 * few whose print was seen before.
 */
class SeenPages {
  readonly #prints = new PrintTable();
  /** The recent pages' ids, oldest first, the page being sorted last. */
  readonly #recent: string[][] = [];
  /** The ids of #recent as a set, made at the first print seen before, until the pages move on. */
  #known: Set<string> | undefined;
  readonly #digests = new Map<string, number>();
  #written = 0;
  #stale = 0;

  accept(number: number, clients: Client[], base: 0 | 1, stats: PagingStats): FetchedPage | 'clamped' {
    const prints = clients.map((client) => quickPrint(client.id));
    if (clients.length > 0) {
      const digest = digestPrints(prints);
      const earlier = this.#digests.get(digest);
      if (earlier !== undefined) {
        if (base === 0 && number === 1 && earlier === 0) return 'clamped';
        throw new ServiceError(
          `the service returned page ${number} with the same ${clients.length} clients as page ${earlier}: ` +
            `it does not page as documented, so the export stopped instead of looping (${this.#written} clients read)`,
          { type: 'bad_response' },
          { code: 'repeated_page' },
        );
      }
      this.#digests.set(digest, number);
    }
    const { fresh, printed } = this.#sort(clients, prints, stats);
    this.#written += fresh.length;
    // Progress is a new print: a server cycling through older ids, in any order, is not.
    this.#stale = printed === 0 && clients.length >= stats.pageSize ? this.#stale + 1 : 0;
    if (this.#stale >= MAX_STALE_PAGES) {
      throw new ServiceError(
        `the service returned ${MAX_STALE_PAGES} full pages in a row (up to page ${number}) holding only clients already ` +
          'exported: it does not page as documented, so the export stopped instead of looping',
        { type: 'bad_response' },
        { code: 'repeated_page' },
      );
    }
    return { number, clients: fresh, received: clients.length };
  }

  /** The page's clients to write, and how many of them had a print not seen before. */
  #sort(clients: Client[], prints: readonly Print[], stats: PagingStats): { fresh: Client[]; printed: number } {
    const page = this.#turnPage();
    const fresh: Client[] = [];
    let printed = 0;
    for (let i = 0; i < clients.length; i++) {
      const client = clients[i]!;
      const id = client.id;
      const isNew = this.#prints.add(prints[i]!) === undefined;
      const repeat = !isNew && this.#knows(id);
      // Every id of the page, repeats too: a shift repeating an id over several pages is seen.
      page.push(id);
      this.#known?.add(id);
      if (repeat) {
        stats.duplicates++;
        continue;
      }
      if (isNew) printed++;
      else stats.unverified++;
      fresh.push(client);
    }
    return { fresh, printed };
  }

  /** A new page's list of ids, last of the recent pages (the oldest dropped). */
  #turnPage(): string[] {
    const page: string[] = [];
    this.#recent.push(page);
    if (this.#recent.length > RECENT_PAGES + 1) this.#recent.shift();
    this.#known = undefined;
    return page;
  }

  /** Whether the id is on a recent page or earlier on this one. */
  #knows(id: string): boolean {
    this.#known ??= new Set(this.#recent.flat());
    return this.#known.has(id);
  }
}

/**
 * A page's ids as a set, whatever their order: the count and three sums of their prints (two
 * different pages share them with odds of 2⁻⁶⁴ a pair or less; sorting and hashing the ids cost
 * more than the rest of the check).
 */
function digestPrints(prints: readonly Print[]): string {
  let hi = 0;
  let lo = 0;
  let mixed = 0;
  for (const print of prints) {
    hi = (hi + print.hi) | 0;
    lo = (lo + print.lo) | 0;
    mixed = (mixed + Math.imul(print.hi ^ Math.imul(print.lo, 0x9e3779b1), 0x85ebca6b)) | 0;
  }
  return `${prints.length}:${hi}:${lo}:${mixed}`;
}

/** A 1-based server refusing page 0: a 400/422 naming `page`, or naming nothing. */
function refusesPageZero(error: unknown): boolean {
  return (
    error instanceof ServiceError &&
    !(error instanceof AuthError) &&
    (error.status === 400 || error.status === 422) &&
    (error.param === undefined || error.param === 'page')
  );
}

/** A refused page size is a configuration problem the user fixes with a flag (exit 2). */
function explain(error: unknown, pageSize: number): unknown {
  if (
    error instanceof ServiceError &&
    !(error instanceof AuthError) &&
    (error.status === 400 || error.status === 422) &&
    error.param === 'size'
  ) {
    return new UsageError(
      `the service refused a page size of ${pageSize} (${error.message}); use a smaller --page-size`,
      'page_size_refused',
      { cause: error },
    );
  }
  return error;
}

function interrupted(): StoppedError {
  return new StoppedError('export interrupted', 'interrupted');
}

/**
 * Waits for `value`, or rejects at once on abort. A listener per wait, removed after: racing
 * every page against one never-settling promise would keep every page reachable from it.
 */
function abortable<T>(value: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return value;
  if (signal.aborted) {
    value.catch(() => {});
    return Promise.reject(interrupted());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(interrupted());
    signal.addEventListener('abort', onAbort, { once: true });
    value.then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
