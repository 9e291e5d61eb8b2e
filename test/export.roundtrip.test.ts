/**
 * Export → import round-trips (property-based): clients with awkward unicode, quotes, commas,
 * newlines and formula-like values, exported from sandbox A to CSV and imported with
 * `importClients` into a fresh sandbox B, come back with name, email, country, address and
 * currency exactly as they were.
 */
import { createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportClients } from '../src/export/run-export.js';
import { importClients } from '../src/import/run-import.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient, type ServiceClient } from '../src/service/client.js';
import { createSigner } from '../src/service/signing.js';
import { makeTempDir } from './helpers.js';

let a: Sandbox;
let b: Sandbox;
let serviceA: ServiceClient;
let serviceB: ServiceClient;
let temp: Awaited<ReturnType<typeof makeTempDir>>;

beforeAll(async () => {
  [a, b] = await Promise.all([startSandbox({ verifySignatures: false }), startSandbox()]);
  serviceA = createServiceClient({ baseUrl: a.url, token: a.token });
  serviceB = createServiceClient({
    baseUrl: b.url,
    token: b.token,
    signer: createSigner(createPrivateKey(b.privateKeyPem!)),
  });
  temp = await makeTempDir();
});
afterAll(async () => {
  await Promise.all([serviceA?.close(), serviceB?.close()]);
  await Promise.all([a?.close(), b?.close()]);
  await temp?.cleanup();
});

const SPECIALS = [
  ',',
  '"',
  '""',
  '\n',
  '\r\n',
  ';',
  '|',
  "'",
  '=',
  '+',
  '-',
  '@',
  ' ',
  '\t',
  'é',
  '漢字',
  '🚀',
  'ß',
];
const piece = fc.oneof(fc.constantFrom(...SPECIALS), fc.string({ unit: 'grapheme', maxLength: 6 }));

/**
 * A value the importer keeps as is: it trims values, so generated ones are already trimmed.
 * Values that themselves start with quotes and a trigger (`'=x`, exported as `''=x`) are in.
 */
const text = fc
  .tuple(
    fc.constantFrom('', '', '=', '+', '-', '@', '=HYPERLINK("x")', "'=", "''+"),
    fc.array(piece, { minLength: 1, maxLength: 6 }),
  )
  .map(([lead, parts]) => `${lead}${parts.join('')}`.trim())
  .filter((value) => value.length > 0 && value.length <= 1000);

const client = fc.record({
  name: text,
  address: text,
  emailPrefix: fc.constantFrom('', '+', '-'),
  local: fc.stringMatching(/^[a-z0-9]{1,8}$/),
  country: fc.constantFrom('DE', 'FR', 'GB', 'JP', 'NG', 'US'),
  currency: fc.option(fc.constantFrom('EUR', 'USD', 'JPY', 'GBP'), { nil: null }),
});

let run = 0;

describe('export → import round-trip', () => {
  it('reproduces name, email, country, address and currency exactly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(client, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        async (generated, bom) => {
          run++;
          // Each run owns one day of created_at, so its export holds its clients only.
          const day = new Date(Date.UTC(2020, 0, 1) + run * 86_400_000).toISOString().slice(0, 10);
          const originals = generated.map((g, i) =>
            a.store.insert({
              name: g.name,
              email: `${g.emailPrefix}${g.local}.${run}.${i}@example.com`,
              country: g.country,
              address: g.address,
              currency: g.currency,
              created_at: `${day}T12:00:00.000Z`,
            }),
          );
          const file = join(temp.dir, `run-${run}.csv`);
          const exported = await exportClients({
            service: serviceA,
            out: file,
            createdFrom: day,
            createdTo: day,
            bom,
          });
          expect(exported.rows).toBe(originals.length);

          const summary = await importClients({ file, service: serviceB, results: `${file}.results.csv` });
          expect(summary.topErrors).toEqual([]);
          expect(summary.counts).toMatchObject({ created: originals.length, invalid: 0, failed: 0 });

          const pick = (c: {
            name: string;
            email: string;
            country: string;
            address: string;
            currency: string | null;
          }) => ({
            name: c.name,
            email: c.email,
            country: c.country,
            address: c.address,
            currency: c.currency,
          });
          const imported = new Map(b.store.all().map((c) => [c.email, pick(c)]));
          for (const original of originals) expect(imported.get(original.email)).toEqual(pick(original));
        },
      ),
      { numRuns: 30 },
    );
  });
});
