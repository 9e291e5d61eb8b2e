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
  name: string;
  idempotency_key: string;
  email: string;
  country: string;
  address: string;
  currency?: string;
  liquidity_type?: string;
  /** The application date, ISO YYYY-MM-DD; its wire name is configurable (--application-date-field). */
  application_date?: string;
}

type NullishText = z.ZodOptional<z.ZodNullable<z.ZodString>>;

/** Text fields the service may leave out or send as null, in this order. */
function nullishText<const K extends string>(...names: K[]): Record<K, NullishText> {
  return Object.fromEntries(names.map((name) => [name, z.string().nullish()])) as Record<K, NullishText>;
}

export const documentSchema = z.object(nullishText('name', 'key', 'status', 'reason'));

export const bankInformationSchema = z.object(nullishText('iban', 'account_number', 'swift_code'));

/** Client detail. Unknown fields are kept: the service may grow, the exporter may want them. */
export const clientSchema = z.looseObject({
  // A client without an id cannot be recorded as created.
  id: z.string().min(1),
  ...nullishText('name', 'status', 'credit_status', 'created_at', 'email', 'country', 'address', 'currency'),
  bank_information: bankInformationSchema.nullish(),
  documents: z.array(documentSchema).nullish(),
});
export type Client = z.infer<typeof clientSchema>;

/** `timestamp` is a number in Create Client and a string in List Clients: accept both. */
export const envelopeSchema = <T extends z.ZodType>(data: T) =>
  z.object({
    status: z.union([z.string(), z.number()]).optional(),
    timestamp: z.union([z.number(), z.string()]).optional(),
    data,
  });

export const listPageSchema = z.object({
  page: z.coerce.number().int(),
  size: z.coerce.number().int(),
  direction: z.string().optional(),
  clients: z.array(clientSchema),
});
export type ListPage = z.infer<typeof listPageSchema>;

export const errorBodySchema = z.object({
  error: z.object({
    ...nullishText('type', 'code', 'message', 'param', 'request_id', 'doc_url'),
    details: z.unknown().optional(),
  }),
});

export interface ListClientsQuery {
  status?: readonly ClientStatus[];
  credit_status?: readonly CreditStatus[];
  /** ISO 8601 */
  'created_at.from'?: string;
  /** ISO 8601 */
  'created_at.to'?: string;
  page?: number;
  size?: number;
  direction?: Direction;
}
