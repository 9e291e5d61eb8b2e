/**
 * The emulator's clients, kept sorted by (created_at, id) — the List Clients order — so a
 * page is a slice, not a sort. The exporter pages through 100,000 clients, so the filtered,
 * ordered result of a query is cached per (filters, direction) and dropped whenever the
 * store changes (a version counter), instead of re-filtering the whole store per page.
 * Clients are frozen once stored, so each one's JSON is made once and reused by every page.
 */
import { randomBytes } from 'node:crypto';
import type { ClientStatus, CreditStatus, Direction } from '../service/schemas.js';
import { type CreateFields, sameFields } from './validate.js';

/** A document on file for a client. */
export interface SandboxDocument {
  /** The document's name. */
  name: string | null;
  /** The service's key for it. */
  key: string | null;
  /** Its review status. */
  status: string | null;
  /** Why it was refused, when it was. */
  reason: string | null;
}

/** A client's bank details. */
export interface SandboxBankInformation {
  /** IBAN. */
  iban: string | null;
  /** Account number, where there is no IBAN. */
  account_number: string | null;
  /** SWIFT/BIC code. */
  swift_code: string | null;
}

/** Client detail as the service sends it (docs/service.md#client-detail); nothing more goes on the wire. */
export interface SandboxClient {
  /** The service's id (`cli_` + 24 hex). */
  id: string;
  /** The client's (company's) name. */
  name: string;
  /** Review status: pending_review (a new client), pending_documents, document_review, rejected, approved. */
  status: ClientStatus;
  /** active or inactive (a new client: inactive). */
  credit_status: CreditStatus;
  /** When it was created (ISO instant with milliseconds): the listing's order and bounds. */
  created_at: string;
  /** Contact e-mail address. */
  email: string;
  /** ISO 3166-1 alpha-2 country code. */
  country: string;
  /** Postal address. */
  address: string;
  /** ISO 4217 currency code, when given. */
  currency: string | null;
  /** Bank details (empty for a new client). */
  bank_information: SandboxBankInformation;
  /** Documents on file (none for a new client). */
  documents: SandboxDocument[];
}

/** What `insert` takes: anything left out gets the value a fresh Create Client would give it. */
export type ClientInput = Partial<Omit<SandboxClient, 'bank_information' | 'created_at'>> & {
  /** Bank details; those left out are null. */
  bank_information?: Partial<SandboxBankInformation>;
  /** Any Date-parsable value; normalized to ISO with milliseconds. Default: now (the sandbox's clock). */
  created_at?: string | Date;
};

/** A List Clients filter, parsed: null means no filter. */
export interface ListFilter {
  /** Statuses let through. */
  statuses: ReadonlySet<string> | null;
  /** Credit statuses let through. */
  creditStatuses: ReadonlySet<string> | null;
  /** inclusive bounds, ms since epoch */
  fromMs: number | null;
  /** Inclusive upper bound, ms since epoch. */
  toMs: number | null;
}

/** A stored client with its sort time and its JSON, serialized on first use. */
export interface StoredClient {
  /** created_at in ms since epoch: the sort key. */
  readonly ms: number;
  /** Replaced (never mutated) by setStatus, the one change a stored client may see. */
  client: SandboxClient;
  /** The client serialized, once asked for; cleared when the client is replaced. */
  json: string | undefined;
}

export function clientJson(stored: StoredClient): string {
  stored.json ??= JSON.stringify(stored.client);
  return stored.json;
}

/**
 * What a Create Client did with its idempotency key: created, replayed (same key, same body) or conflict
 * (same key, another body).
 */
export type CreateOutcome = {
  /** created: a new client; replayed: the key's client again (same body); conflict: the key with another body. */
  kind: 'created' | 'replayed' | 'conflict';
  /** The client made now or by the key's first request. */
  stored: StoredClient;
};

type Entry = StoredClient;

/** Order of List Clients: created_at, then id. */
function compareEntries(a: Entry, b: Entry): number {
  return a.ms - b.ms || (a.client.id < b.client.id ? -1 : a.client.id > b.client.id ? 1 : 0);
}

/** A bounded cache is enough: an export asks the same query over and over, rarely many at once. */
const MAX_CACHED_QUERIES = 64;

// Random bytes drawn in blocks: one randomBytes call per id costs more than the rest of a create.
let idPool = Buffer.alloc(0);
let idOffset = 0;

export function newClientId(): string {
  if (idOffset + 12 > idPool.length) {
    idPool = randomBytes(12 * 1024);
    idOffset = 0;
  }
  idOffset += 12;
  return `cli_${idPool.toString('hex', idOffset - 12, idOffset)}`;
}

export class SandboxStore {
  /** "now" for a client stored without a created_at: the sandbox's clock. */
  readonly #now: () => number;
  readonly #entries: Entry[] = [];
  readonly #byId = new Map<string, Entry>();
  readonly #byKey = new Map<string, { fields: CreateFields; stored: StoredClient }>();
  readonly #cache = new Map<string, readonly StoredClient[]>();
  #cacheVersion = 0;
  #version = 0;

  /** `now`: the time a client created without a created_at gets (default: the real time). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Bumped on every change; cached query results older than it are stale. */
  get version(): number {
    return this.#version;
  }

  /** Clients held. */
  get size(): number {
    return this.#entries.length;
  }

  /** Every client in List Clients ascending order (a copy). */
  all(): SandboxClient[] {
    return this.#entries.map((entry) => entry.client);
  }

  /** The client with this id, or undefined. */
  get(id: string): SandboxClient | undefined {
    return this.#byId.get(id)?.client;
  }

  /** The client with its cached JSON, for replies. */
  stored(id: string): StoredClient | undefined {
    return this.#byId.get(id);
  }

  /** The client a Create Client with this idempotency key made, or undefined. */
  byIdempotencyKey(key: string): SandboxClient | undefined {
    return this.#byKey.get(key)?.stored.client;
  }

  /**
   * Adds a client directly (seeding, "created during export" tests). created_at = the clock's now unless
   * given. The client returned is frozen: stored clients change only through the store.
   */
  insert(input: ClientInput = {}): SandboxClient {
    return this.#insert(input).client;
  }

  #insert(input: ClientInput): StoredClient {
    const entry = toEntry(input, this.#now);
    if (this.#byId.has(entry.client.id)) throw new Error(`duplicate client id ${entry.client.id}`);
    this.#place(entry);
    return entry;
  }

  /** Bulk insert with one sort at the end, not one binary insertion per client (seeding 100,000). */
  insertMany(inputs: Iterable<ClientInput>): void {
    for (const input of inputs) {
      const entry = toEntry(input, this.#now);
      if (this.#byId.has(entry.client.id)) throw new Error(`duplicate client id ${entry.client.id}`);
      this.#byId.set(entry.client.id, entry);
      this.#entries.push(entry);
    }
    this.#entries.sort(compareEntries);
    this.#version++;
  }

  /**
   * Create Client's idempotency: same key + same request content returns the first client;
   * same key + other content is a conflict; otherwise `make` builds the new client.
   */
  createIdempotent(key: string, fields: CreateFields, make: () => ClientInput): CreateOutcome {
    const known = this.#byKey.get(key);
    if (known)
      return { kind: sameFields(known.fields, fields) ? 'replayed' : 'conflict', stored: known.stored };
    const stored = this.#insert(make());
    this.#byKey.set(key, { fields, stored });
    return { kind: 'created', stored };
  }

  /**
   * A review decision, as the service's back office would make it (sandbox only: the service
   * publishes no such operation): the client's status and/or credit status change in place,
   * keeping its id and created_at. Undefined for an unknown id.
   */
  setStatus(
    id: string,
    change: {
      /** The new review status. */
      status?: ClientStatus;
      /** The new credit status. */
      credit_status?: CreditStatus;
    },
  ): SandboxClient | undefined {
    const entry = this.#byId.get(id);
    if (!entry) return undefined;
    entry.client = Object.freeze({ ...entry.client, ...change });
    entry.json = undefined;
    this.#version++;
    return entry.client;
  }

  /** The clients matching `filter`, in `direction` order; callers slice pages from it. */
  query(filter: ListFilter, direction: Direction, cacheKey: string): readonly StoredClient[] {
    if (this.#cacheVersion !== this.#version || this.#cache.size >= MAX_CACHED_QUERIES) {
      this.#cache.clear();
      this.#cacheVersion = this.#version;
    }
    const cached = this.#cache.get(cacheKey);
    if (cached) return cached;
    const result = this.#select(filter);
    if (direction === 'desc') result.reverse();
    this.#cache.set(cacheKey, result);
    return result;
  }

  #select({ statuses, creditStatuses, fromMs, toMs }: ListFilter): StoredClient[] {
    // The entries are sorted by time: a created_at range is two binary searches.
    const start = fromMs === null ? 0 : this.#firstIndexAfter((ms) => ms < fromMs);
    const end = toMs === null ? this.#entries.length : this.#firstIndexAfter((ms) => ms <= toMs);
    if (!statuses && !creditStatuses) return this.#entries.slice(start, end);
    const out: StoredClient[] = [];
    for (let i = start; i < end; i++) {
      const entry = this.#entries[i]!;
      if (statuses && !statuses.has(entry.client.status)) continue;
      if (creditStatuses && !creditStatuses.has(entry.client.credit_status)) continue;
      out.push(entry);
    }
    return out;
  }

  /** First index whose entry does not satisfy `before` (entries satisfying it form a prefix). */
  #firstIndexAfter(before: (ms: number) => boolean): number {
    let lo = 0;
    let hi = this.#entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.#entries[mid]!.ms)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #place(entry: Entry): void {
    const entries = this.#entries;
    const last = entries[entries.length - 1];
    // New clients are stamped "now": appending is the common case.
    if (!last || compareEntries(last, entry) <= 0) {
      entries.push(entry);
    } else {
      let lo = 0;
      let hi = entries.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareEntries(entries[mid]!, entry) <= 0) lo = mid + 1;
        else hi = mid;
      }
      entries.splice(lo, 0, entry);
    }
    this.#byId.set(entry.client.id, entry);
    this.#version++;
  }
}

function toEntry(input: ClientInput, now: () => number): Entry {
  const created =
    input.created_at instanceof Date ? input.created_at : new Date(input.created_at ?? now());
  const ms = created.getTime();
  if (Number.isNaN(ms)) throw new RangeError(`invalid created_at: ${String(input.created_at)}`);
  const bank = input.bank_information;
  const client: SandboxClient = Object.freeze({
    id: input.id ?? newClientId(),
    name: input.name ?? '',
    status: input.status ?? 'pending_review',
    credit_status: input.credit_status ?? 'inactive',
    created_at: created.toISOString(),
    email: input.email ?? '',
    country: input.country ?? '',
    address: input.address ?? '',
    currency: input.currency ?? null,
    bank_information: Object.freeze({
      iban: bank?.iban ?? null,
      account_number: bank?.account_number ?? null,
      swift_code: bank?.swift_code ?? null,
    }),
    documents: Object.freeze(
      (input.documents ?? []).map((doc) => Object.freeze({ ...doc })),
    ) as SandboxDocument[],
  });
  return { ms, client, json: undefined };
}
