/**
 * The wire format of the Client Credit Service, as far as it is known (docs/service.md).
 * The client parses every response through these; the sandbox produces them.
 */
import { z } from 'zod';

export const CLIENT_STATUSES = [
  'pending_review',
  'pending_documents',
  'document_review',
  'rejected',
  'approved',
] as const;
export const CREDIT_STATUSES = ['active', 'inactive'] as const;
export const DIRECTIONS = ['asc', 'desc'] as const;

export type ClientStatus = (typeof CLIENT_STATUSES)[number];
export type CreditStatus = (typeof CREDIT_STATUSES)[number];
export type Direction = (typeof DIRECTIONS)[number];

/** The Create Client body, in the order it is serialized (the order is part of the signed bytes). */
export interface CreateClientBody {
  /** The client's (company's) name. */
  name: string;
  /**
   * A key unique to this client: a retry or a rerun with the same key returns the client created the first
   * time instead of a second one.
   */
  idempotency_key: string;
  /** Contact e-mail address. */
  email: string;
  /** ISO 3166-1 alpha-2 country code (`DE`). */
  country: string;
  /** Postal address, lines separated by newlines. */
  address: string;
  /** ISO 4217 currency code (`EUR`). */
  currency?: string;
  /** The liquidity type the service files the client under (the import's default: `chain`). */
  liquidity_type?: string;
  /** The application date, ISO YYYY-MM-DD; its wire name is configurable (--application-date-field). */
  application_date?: string;
}

type NullishText = z.ZodOptional<z.ZodNullable<z.ZodString>>;

/** Text fields the service may leave out or send as null, in this order. */
function nullishText<const K extends string>(...names: K[]): Record<K, NullishText> {
  return Object.fromEntries(names.map((name) => [name, z.string().nullish()])) as Record<K, NullishText>;
}

// Fields spelled out, not made by nullishText: each carries the doc comment an editor shows.
export const documentSchema = z.object({
  /** The document's name. */
  name: z.string().nullish(),
  /** The service's key for it. */
  key: z.string().nullish(),
  /** Its review status. */
  status: z.string().nullish(),
  /** Why it was refused, when it was. */
  reason: z.string().nullish(),
});

export const bankInformationSchema = z.object({
  /** IBAN. */
  iban: z.string().nullish(),
  /** Account number, where there is no IBAN. */
  account_number: z.string().nullish(),
  /** SWIFT/BIC code. */
  swift_code: z.string().nullish(),
});

/** Client detail. Unknown fields are kept: the service may grow, the exporter may want them. */
export const clientSchema = z.looseObject({
  // A client without an id cannot be recorded as created.
  /** The service's id for the client (`cli_…`). */
  id: z.string().min(1),
  /** The client's (company's) name. */
  name: z.string().nullish(),
  /** Review status: pending_review, pending_documents, document_review, rejected or approved. */
  status: z.string().nullish(),
  /** Credit status: active or inactive. */
  credit_status: z.string().nullish(),
  /** When the client was created (ISO instant): the listing's order and bounds. */
  created_at: z.string().nullish(),
  /** Contact e-mail address. */
  email: z.string().nullish(),
  /** ISO 3166-1 alpha-2 country code. */
  country: z.string().nullish(),
  /** Postal address, lines separated by newlines. */
  address: z.string().nullish(),
  /** ISO 4217 currency code. */
  currency: z.string().nullish(),
  /** Bank details, when the service has them. */
  bank_information: bankInformationSchema.nullish(),
  /** Documents on file. */
  documents: z.array(documentSchema).nullish(),
});
/**
 * A client as the service returns it (Client detail): every field but `id` may be missing or
 * null, and fields the service adds are kept.
 */
export type Client = z.infer<typeof clientSchema>;

/** `timestamp` is a number in Create Client and a string in List Clients: accept both. */
export const envelopeSchema = <T extends z.ZodType>(data: T) =>
  z.object({
    status: z.union([z.string(), z.number()]).optional(),
    timestamp: z.union([z.number(), z.string()]).optional(),
    data,
  });

export const listPageSchema = z.object({
  /** The page's number, as the service counts (from 0 or 1). */
  page: z.coerce.number().int(),
  /** The page size the service applied. */
  size: z.coerce.number().int(),
  /** The order by created_at, as the service echoes it. */
  direction: z.string().optional(),
  /** The page's clients; fewer than `size` (or none) on the last page. */
  clients: z.array(clientSchema),
});
export type ListPage = z.infer<typeof listPageSchema>;

const listEnvelopeSchema = envelopeSchema(listPageSchema);

/** How a reply's body is checked: a zod schema, or one with a quicker way to the same result. */
export interface BodyParser<T> {
  safeParse(input: unknown): { success: true; data: T } | { success: false; error: z.ZodError };
}

/**
 * The List Clients answer. A body zod would accept and copy unchanged (every field of the
 * right type, no field stripped, the keys in the schema's order, as the service sends them)
 * is taken as parsed, its objects kept, without zod's copy of every client; any other body
 * goes through zod, which accepts, copies or refuses it, with its issues.
 */
export const listEnvelope: BodyParser<{ data: ListPage }> = {
  safeParse(input) {
    const page = plainListPage(input);
    return page === undefined ? listEnvelopeSchema.safeParse(input) : { success: true, data: { data: page } };
  },
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown) => value === null || typeof value === 'string';
const isFinite = (value: unknown) => typeof value === 'string' || Number.isFinite(value);

/** The page zod would make of `body`, when it is the body as is; undefined when in doubt. */
function plainListPage(body: unknown): ListPage | undefined {
  if (!isRecord(body) || !isRecord(body.data)) return undefined;
  if (('status' in body && !isFinite(body.status)) || ('timestamp' in body && !isFinite(body.timestamp))) return undefined;
  const { page, size, direction, clients } = body.data;
  if (!Number.isSafeInteger(page) || !Number.isSafeInteger(size) || !Array.isArray(clients)) return undefined;
  const hasDirection = 'direction' in body.data;
  if (hasDirection && typeof direction !== 'string') return undefined;
  for (const client of clients) if (!isPlain(client, CLIENT_SHAPE, true)) return undefined;
  return (hasDirection ? { page, size, direction, clients } : { page, size, clients }) as ListPage;
}

/** An object schema's keys in its order, and each one's kind: 0 the id, 1 text, 2 bank information, 3 documents. */
interface Shape {
  readonly order: readonly string[];
  readonly kinds: readonly number[];
  readonly keys: ReadonlySet<string>;
}

function shapeOf(schema: z.ZodObject, kinds: Record<string, number>): Shape {
  const order = Object.keys(kinds);
  // A field the schema gained and this list lacks would pass for one of the service's own, unchecked.
  if (order.join() !== Object.keys(schema.shape).join()) throw new Error('plainListPage is out of step with clientSchema');
  return { order, kinds: Object.values(kinds), keys: new Set(order) };
}

const CLIENT_SHAPE = shapeOf(clientSchema, {
  id: 0, name: 1, status: 1, credit_status: 1, created_at: 1, email: 1, country: 1, address: 1, currency: 1,
  bank_information: 2, documents: 3,
});
const BANK_SHAPE = shapeOf(bankInformationSchema, { iban: 1, account_number: 1, swift_code: 1 });
const DOCUMENT_SHAPE = shapeOf(documentSchema, { name: 1, key: 1, status: 1, reason: 1 });

/**
 * Whether zod's object (loose: `extra`) would keep `value` as it is: the known keys first, in
 * the schema's order, each of the right type; then, loose only, keys of its own (no __proto__,
 * which zod drops, no index-like key, which objects list first). `id` (kind 0) is required.
 */
function isPlain(value: unknown, shape: Shape, extra: boolean): boolean {
  if (!isRecord(value)) return false;
  const { order, kinds } = shape;
  let next = 0;
  let known = true;
  let id = !extra;
  for (const key in value) {
    let at = next;
    while (at < order.length && order[at] !== key) at++;
    if (at === order.length) {
      // Not a key further on: one of its own, or a known key out of order.
      if (!extra || shape.keys.has(key) || key === '__proto__' || /^\d/.test(key)) return false;
      known = false;
      continue;
    }
    if (!known || !isKind(value[key], kinds[at]!)) return false;
    next = at + 1;
    if (kinds[at] === 0) id = true;
  }
  return id;
}

function areDocuments(documents: readonly unknown[]): boolean {
  for (const document of documents) if (!isPlain(document, DOCUMENT_SHAPE, false)) return false;
  return true;
}

function isKind(value: unknown, kind: number): boolean {
  switch (kind) {
    case 0:
      return typeof value === 'string' && value.length > 0;
    case 1:
      return isText(value);
    case 2:
      return value === null || isPlain(value, BANK_SHAPE, false);
    default:
      return value === null || (Array.isArray(value) && areDocuments(value));
  }
}

export const errorBodySchema = z.object({
  error: z.object({
    ...nullishText('type', 'code', 'message', 'param', 'request_id', 'doc_url'),
    details: z.unknown().optional(),
  }),
});

/** List Clients' query: filters, page and order, as the service takes them. */
export interface ListClientsQuery {
  /** Only clients in one of these statuses. */
  status?: readonly ClientStatus[];
  /** Only clients with one of these credit statuses. */
  credit_status?: readonly CreditStatus[];
  /** ISO 8601 */
  'created_at.from'?: string;
  /** ISO 8601 */
  'created_at.to'?: string;
  /** The page asked for; the first is 0 or 1, depending on the service. */
  page?: number;
  /** Clients per page. */
  size?: number;
  /** Order by created_at: asc (oldest first) or desc. */
  direction?: Direction;
}
