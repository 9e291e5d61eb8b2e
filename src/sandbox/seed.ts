/**
 * Seeded clients: varied enough to exercise an exporter (every status, two years of dates,
 * unicode, commas, quotes, newlines, values that look like spreadsheet formulas) and the
 * same every time for a given seedRandom, so tests can pin exact output.
 */
import { CLIENT_STATUSES, type ClientStatus, type CreditStatus } from '../service/schemas.js';
import { createRandom, pick, type Random, randomHex, randomInt } from './random.js';
import type { ClientInput, SandboxDocument } from './store.js';

/**
 * A fixed window by default, not "now minus two years": the same seed gives the same created_at
 * forever. A rehearsal of this week's report seeds up to now instead (`seedUntil`), still the
 * same for the same seed and the same clock.
 */
export const SEED_FROM = Date.parse('2024-01-01T00:00:00.000Z');
export const SEED_TO = Date.parse('2026-01-01T00:00:00.000Z');
const SEED_SPAN_MS = SEED_TO - SEED_FROM;

const FIRST = [
  'Anna',
  'José',
  'Zoë',
  'Łukasz',
  'Søren',
  'Aisha',
  'Chen',
  'Olivia',
  'Noah',
  'Émile',
  'Ngozi',
  'Raj',
];
const LAST = [
  'Müller',
  'García',
  'Nowak',
  'Ørsted',
  'Smith',
  'Okafor',
  'Tanaka',
  "O'Brien",
  'Dubois',
  'Rossi',
];
const COMPANIES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Stark', 'Wayne', 'Hooli', 'Vandelay'];
/** Awkward names a CSV writer must quote or escape, and non-Latin scripts. */
const AWKWARD_NAMES = [
  'Smith, John',
  'Acme "Best" Ltd',
  'Line one\nLine two GmbH',
  '王芳',
  'محمد العلي',
  'Ελένη Παπαδοπούλου',
  'Андрей Иванов',
  '山田 太郎 🚀',
];
/** Values a spreadsheet would run as formulas if an exporter did not escape them. */
const FORMULA_LIKE = [
  '=SUM(A1:A9)',
  '+44 20 7946 0000',
  '-5 Minus Corp',
  '@handle Ltd',
  '=HYPERLINK("http://x")',
  '\tTabbed Ltd',
  '\rCarriage Return Inc.',
];
/** Every awkward name appears early (every 4th client), so even a small seed covers them all. */
const SHOWCASE = [...FORMULA_LIKE, ...AWKWARD_NAMES];
const SHOWCASE_EVERY = 4;
const STREETS = ['Main Street', 'Rue de la Paix', 'Hauptstraße', 'Calle Mayor', 'Via Roma', 'Ulica Długa'];
const CITIES = ['Berlin', 'Paris', 'Madrid', 'London', 'Warszawa', 'Roma', 'København', 'Lagos', 'Tokyo'];
const COUNTRIES: readonly (readonly [string, string])[] = [
  ['DE', 'EUR'],
  ['FR', 'EUR'],
  ['ES', 'EUR'],
  ['GB', 'GBP'],
  ['PL', 'PLN'],
  ['IT', 'EUR'],
  ['DK', 'DKK'],
  ['NG', 'NGN'],
  ['JP', 'JPY'],
  ['US', 'USD'],
  ['CH', 'CHF'],
];
const DOC_NAMES = [
  'passport.pdf',
  'proof_of_address.pdf',
  'bank_statement.pdf',
  'articles_of_association.pdf',
];
const DOC_STATUSES = ['pending', 'accepted', 'rejected'] as const;
const REJECT_REASONS = ['Document expired', 'Unreadable scan', 'Name does not match, please re-upload'];

function ascii(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '.')
    .replace(/^\.+|\.+$/g, '')
    .toLowerCase();
}

function makeName(random: Random, index: number): string {
  const roll = random();
  const showcase = (index - 1) / SHOWCASE_EVERY;
  if (Number.isInteger(showcase) && showcase < SHOWCASE.length) return SHOWCASE[showcase]!;
  if (roll < 0.06) return pick(random, AWKWARD_NAMES);
  if (roll < 0.09) return pick(random, FORMULA_LIKE);
  if (roll < 0.35)
    return `${pick(random, COMPANIES)} ${pick(random, ['Ltd', 'GmbH', 'S.A.', 'Inc.'])} ${index}`;
  return `${pick(random, FIRST)} ${pick(random, LAST)}`;
}

function makeAddress(random: Random): string {
  const street = `${randomInt(random, 1, 250)} ${pick(random, STREETS)}`;
  const city = `${randomInt(random, 10000, 99999)} ${pick(random, CITIES)}`;
  const roll = random();
  if (roll < 0.05) return `${street}\n${city}`;
  if (roll < 0.08) return `"The Old Mill", ${street}, ${city}`;
  if (roll < 0.1) return `-${street}, ${city}`;
  return `${street}, ${city}`;
}

function makeStatus(random: Random): { status: ClientStatus; credit: CreditStatus } {
  const status = pick(random, CLIENT_STATUSES);
  // Credit is active mostly for approved clients, as in a real review flow; a few exceptions.
  const activeChance = status === 'approved' ? 0.8 : 0.03;
  const credit: CreditStatus = random() < activeChance ? 'active' : 'inactive';
  return { status, credit };
}

function makeDocuments(random: Random): SandboxDocument[] {
  const count = randomInt(random, 0, 3);
  const documents: SandboxDocument[] = [];
  for (let i = 0; i < count; i++) {
    const status = pick(random, DOC_STATUSES);
    documents.push({
      name: pick(random, DOC_NAMES),
      key: `doc_${randomHex(random, 16)}`,
      status,
      reason: status === 'rejected' ? pick(random, REJECT_REASONS) : null,
    });
  }
  return documents;
}

function makeClient(random: Random, index: number, window: readonly [number, number]): ClientInput {
  const name = makeName(random, index);
  const [country, currency] = pick(random, COUNTRIES);
  const { status, credit } = makeStatus(random);
  const hasBank = random() < 0.6;
  const local = ascii(name) || 'client';
  return {
    id: `cli_${randomHex(random, 24)}`,
    name,
    status,
    credit_status: credit,
    created_at: new Date(window[0] + Math.floor(random() * (window[1] - window[0]))),
    // A leading '+' is a valid local part and a formula trigger in a spreadsheet.
    email: `${random() < 0.02 ? '+' : ''}${local}.${index}@example.com`,
    country,
    address: makeAddress(random),
    currency: random() < 0.9 ? currency : null,
    bank_information: hasBank
      ? {
          iban: `${country}${randomInt(random, 10, 99)}${randomHex(random, 16).toUpperCase()}`,
          account_number: random() < 0.5 ? String(randomInt(random, 0, 99_999_999)).padStart(10, '0') : null,
          swift_code: `${randomHex(random, 4).toUpperCase().replace(/[0-9]/g, 'X')}${country}2L`,
        }
      : {},
    documents: makeDocuments(random),
  };
}

/**
 * `count` deterministic clients for `seedRandom`, in no particular order (the store sorts);
 * created in the fixed two years, or in the two years up to `untilMs` (the sandbox clock's now).
 */
export function* seedClients(count: number, seedRandom: number, untilMs?: number): Generator<ClientInput> {
  const random = createRandom(seedRandom);
  const window = untilMs === undefined ? ([SEED_FROM, SEED_TO] as const) : ([untilMs - SEED_SPAN_MS, untilMs] as const);
  for (let index = 1; index <= count; index++) yield makeClient(random, index, window);
}
