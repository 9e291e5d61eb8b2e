/**
 * Filters: each alone and combined returns exactly the subset computed from the store; flags
 * are checked before any request, with errors that list the valid values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { checkExportSettings, parseCreatedBound } from '../src/export/options.js';
import { type ExportClientsOptions, exportClients } from '../src/export/run-export.js';
import { type ExportFlags, parseExportOptions } from '../src/config/options.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import { collector, expectedIds, parseCsv, type Subset } from './export.helpers.js';

let sandbox: Sandbox;
let service: ServiceClient;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 4000, seedRandom: 3 });
  service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, connections: 4 });
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

async function exportedIds(settings: Omit<ExportClientsOptions, 'service' | 'out'>): Promise<Set<string>> {
  const sink = collector();
  await exportClients({ ...settings, service, out: sink, columns: ['id'] });
  const ids = parseCsv(await sink.text()).map((r) => r.id!);
  expect(new Set(ids).size).toBe(ids.length);
  return new Set(ids);
}

const day = (text: string) => Date.parse(`${text}T00:00:00.000Z`);
const DAY_MS = 86_400_000;

const cases: [string, Omit<ExportClientsOptions, 'service' | 'out'>, Subset][] = [
  ['status', { status: 'approved' }, { status: ['approved'] }],
  ['several statuses', { status: 'pending_review,rejected' }, { status: ['pending_review', 'rejected'] }],
  ['credit status', { creditStatus: ['active'] }, { creditStatus: ['active'] }],
  [
    'created from (a date: from its first instant)',
    { createdFrom: '2025-06-01' },
    { fromMs: day('2025-06-01') },
  ],
  [
    'created to (a date: the whole day is included)',
    { createdTo: '2024-03-31' },
    { toMs: day('2024-03-31') + DAY_MS - 1 },
  ],
  [
    'date-times with offsets',
    { createdFrom: '2024-05-01T12:00:00+02:00', createdTo: '2024-05-20T08:30:00Z' },
    { fromMs: Date.parse('2024-05-01T10:00:00Z'), toMs: Date.parse('2024-05-20T08:30:00Z') },
  ],
  [
    'everything combined, desc (a monthly approved-and-active report)',
    {
      status: 'approved',
      creditStatus: 'active',
      createdFrom: '2025-01-01',
      createdTo: '2025-01-31',
      direction: 'desc',
    },
    {
      status: ['approved'],
      creditStatus: ['active'],
      fromMs: day('2025-01-01'),
      toMs: day('2025-02-01') - 1,
    },
  ],
];

describe('filters equal the expected subset', () => {
  for (const [label, settings, subset] of cases) {
    it(label, async () => {
      const expected = expectedIds(sandbox.store.all(), subset);
      expect(expected.size).toBeGreaterThan(0);
      expect(await exportedIds(settings)).toEqual(expected);
    });
  }

  it('a date-only upper bound includes a client created at 23:59:59.999 that day', async () => {
    const edge = sandbox.store.insert({ name: 'Edge', created_at: '2023-07-14T23:59:59.999Z' });
    const next = sandbox.store.insert({ name: 'Next day', created_at: '2023-07-15T00:00:00.000Z' });
    const ids = await exportedIds({ createdFrom: '2023-07-14', createdTo: '2023-07-14' });
    expect([...ids]).toEqual([edge.id]);
    expect(ids.has(next.id)).toBe(false);
  });
});

const argv = (overrides: Partial<ExportFlags>): ExportFlags =>
  ({
    out: '-',
    format: 'csv',
    escapeFormulas: true,
    direction: 'asc',
    pageSize: 100,
    prefetch: 4,
    timeout: 30,
    retries: 5,
    ...overrides,
  }) as ExportFlags;

describe('flag checks (before any request)', () => {
  it('resolves defaults', () => {
    expect(parseExportOptions(argv({}))).toMatchObject({
      out: '-',
      format: 'csv',
      columns: expect.arrayContaining(['id', 'documents']),
      bom: false,
      escapeFormulas: true,
      status: undefined,
      createdTo: undefined,
      pageSize: 100,
      prefetch: 4,
    });
  });

  it.each([
    [{ status: 'aproved' }, /--status: unknown value "aproved" \(did you mean approved\?\); valid values are pending_review, .*approved/],
    [{ status: 'active' }, /"active" is a value of --credit-status/],
    [
      { creditStatus: 'enabled' },
      /--credit-status: unknown value "enabled"; valid values are active, inactive/,
    ],
    [{ columns: 'id,nme' }, /--columns: unknown column "nme" \(did you mean name\?\); columns are id, name, email/],
    [{ columns: 'id,id' }, /names "id" twice/],
    [{ createdFrom: '2025-02-30' }, /--created-from "2025-02-30": February has 28 days in 2025/],
    [{ createdFrom: '2024-02-30' }, /February has 29 days in 2024/],
    [{ createdFrom: '2025-04-31' }, /April has 30 days;/],
    [{ createdFrom: '2025-13-01' }, /--created-from "2025-13-01": month 13 does not exist/],
    [{ createdTo: '2025-00' }, /month 00 does not exist/],
    [{ createdFrom: '2025-01-01T24:00' }, /hour 24 does not exist/],
    [{ createdTo: '31/01/2025' }, /--created-to "31\/01\/2025": write it as 2025-01-31 \(31 January 2025\)/],
    [
      { createdFrom: '01/02/2025' },
      /ambiguous: 1 February 2025 \(day first\) or 2 January 2025 \(month first\); write 2025-02-01 or 2025-01-02/,
    ],
    [{ createdFrom: 'last week' }, /not an ISO 8601 date or date-time; e.g. 2025-01-31, 2025-01 or/],
    [{ createdFrom: '2025-02-01', createdTo: '2025-01-31' }, /is after/],
    [{ pageSize: 0 }, /--page-size must be a whole number from 1 to 1000/],
    [{ pageSize: 1001 }, /--page-size/],
    [{ prefetch: 16_385 }, /--prefetch must be a whole number from 1 to 16384/],
    [{ prefetch: 1.5 }, /--prefetch/],
    [{ format: 'jsonl', bom: true }, /--bom applies to CSV only/],
    [{ out: '  ' }, /--out needs a file name/],
  ] as [Partial<ExportFlags>, RegExp][])('%o is a usage error', (overrides, message) => {
    expect(() => parseExportOptions(argv(overrides))).toThrow(UsageError);
    expect(() => parseExportOptions(argv(overrides))).toThrow(message);
  });

  it('accepts spaces, case and repeats in lists, and orders columns as given', () => {
    const options = parseExportOptions(
      argv({ status: ' Approved, rejected,approved ', columns: 'email, ID ,name', creditStatus: 'active,' }),
    );
    expect(options.status).toEqual(['approved', 'rejected']);
    expect(options.creditStatus).toEqual(['active']);
    expect(options.columns).toEqual(['email', 'id', 'name']);
  });

  it('a date-time without a time zone is taken as UTC, and the summary says so', () => {
    const options = parseExportOptions(argv({ createdFrom: '2025-01-01 10:00', createdTo: '2025-01-02T10:00:00+01:00' }));
    expect(options.createdFrom).toBe('2025-01-01T10:00:00.000Z');
    expect(options.boundNotes).toEqual(['--created-from "2025-01-01 10:00" has no time zone: taken as UTC (2025-01-01T10:00:00.000Z)']);
  });

  it('library settings use the option names in messages', () => {
    expect(() => checkExportSettings({ columns: ['nope'] })).toThrow(/^columns: unknown column "nope"/);
  });

  it.each([
    ['2025-01-31', 'from', '2025-01-31T00:00:00.000Z'],
    ['2025-01-31', 'to', '2025-01-31T23:59:59.999Z'],
    ['2025-01-31T18:00', 'to', '2025-01-31T18:00:00.000Z'],
    ['2025-01-31 18:00:05.123456', 'to', '2025-01-31T18:00:05.123Z'],
    ['2025-01-31T18:00:00+0530', 'from', '2025-01-31T12:30:00.000Z'],
    ['2025-01-31T01:00:00-05:00', 'to', '2025-01-31T06:00:00.000Z'],
    // A month is the whole month; February knows its leap years.
    ['2025-01', 'from', '2025-01-01T00:00:00.000Z'],
    ['2025-01', 'to', '2025-01-31T23:59:59.999Z'],
    ['2024-02', 'to', '2024-02-29T23:59:59.999Z'],
  ] as const)('bound %s (%s) → %s', (text, bound, iso) => {
    expect(parseCreatedBound(text, bound, '--x')).toBe(iso);
  });
});
