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

export const documentSchema = z.object({
  name: z.string().nullish(),
  key: z.string().nullish(),
  status: z.string().nullish(),
  reason: z.string().nullish(),
});

export const bankInformationSchema = z.object({
  iban: z.string().nullish(),
  account_number: z.string().nullish(),
  swift_code: z.string().nullish(),
});

/** Client detail. Unknown fields are kept: the service may grow, the exporter may want them. */
export const clientSchema = z.looseObject({
  // A client without an id cannot be recorded as created.
  id: z.string().min(1),
  name: z.string().nullish(),
  status: z.string().nullish(),
  credit_status: z.string().nullish(),
  created_at: z.string().nullish(),
  email: z.string().nullish(),
  country: z.string().nullish(),
  address: z.string().nullish(),
  currency: z.string().nullish(),
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
    type: z.string().nullish(),
    code: z.string().nullish(),
    message: z.string().nullish(),
    param: z.string().nullish(),
    request_id: z.string().nullish(),
    doc_url: z.string().nullish(),
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
