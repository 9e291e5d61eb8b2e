/**
 * The export's columns and the flattening of one client detail into them:
 * `bank_information` becomes three `bank_*` columns, `documents` a count and the list itself.
 */
import type { Client } from '../service/schemas.js';

/** Every column an export can write, in the default order. */
export const EXPORT_COLUMNS = [
  'id',
  'name',
  'email',
  'country',
  'address',
  'currency',
  'status',
  'credit_status',
  'created_at',
  'bank_iban',
  'bank_account_number',
  'bank_swift_code',
  'documents_count',
  'documents',
] as const;
/** One of EXPORT_COLUMNS. */
export type ExportColumn = (typeof EXPORT_COLUMNS)[number];

export interface ExportDocument {
  name: string | null;
  key: string | null;
  status: string | null;
  reason: string | null;
}

/** One client as the export sees it; `null` is an absent value (an empty CSV cell). */
export interface FlatClient {
  id: string;
  name: string | null;
  email: string | null;
  country: string | null;
  address: string | null;
  currency: string | null;
  status: string | null;
  credit_status: string | null;
  created_at: string | null;
  bank_iban: string | null;
  bank_account_number: string | null;
  bank_swift_code: string | null;
  documents_count: number;
  documents: ExportDocument[];
}

export function flattenClient(client: Client): FlatClient {
  const bank = client.bank_information;
  const documents = (client.documents ?? []).map((doc) => ({
    name: doc.name ?? null,
    key: doc.key ?? null,
    status: doc.status ?? null,
    reason: doc.reason ?? null,
  }));
  return {
    id: client.id,
    name: client.name ?? null,
    email: client.email ?? null,
    country: client.country ?? null,
    address: client.address ?? null,
    currency: client.currency ?? null,
    status: client.status ?? null,
    credit_status: client.credit_status ?? null,
    created_at: client.created_at ?? null,
    bank_iban: bank?.iban ?? null,
    bank_account_number: bank?.account_number ?? null,
    bank_swift_code: bank?.swift_code ?? null,
    documents_count: documents.length,
    documents,
  };
}
