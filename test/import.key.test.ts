import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeySet } from '../src/import/row/key-set.js';
import { canonicalJson, deriveKey, fold } from '../src/import/row/key.js';
import type { ClientFields } from '../src/import/row/validate-row.js';

const base: ClientFields = {
  name: 'Zoë Müller',
  email: 'zoe@example.com',
  country: 'DE',
  address: 'Hauptstraße 1, Berlin',
  currency: 'EUR',
  application_date: '2024-03-01',
  liquidity_type: 'chain',
};

describe('deriveKey', () => {
  it('is stable across runs and cosmetic differences', () => {
    const key = deriveKey(base);
    // Pinned: a change to the derivation would make every earlier import re-create clients.
    expect(key).toBe('ccsb_e8336c4221e96f4147f411e1b85f081e43202487');
    expect(
      deriveKey({ name: 'A "q" \\ b', email: 'a@b.co', country: 'FR', address: 'x\u0001y', liquidity_type: 'chain' }),
    ).toBe('ccsb_ac1857a63f314967c76702eb70f8a48689f275b2');
    expect(key).toBe(deriveKey({ ...base }));
    expect(deriveKey({ ...base, email: 'ZOE@Example.com' })).toBe(key);
    expect(deriveKey({ ...base, name: 'Zoe\u0308 Mu\u0308ller' })).toBe(key); // NFD, as macOS saves it
    expect(deriveKey({ ...base, address: 'Hauptstraße  1,\tBerlin' })).toBe(key);
  });

  it('changes with the content that is sent', () => {
    const key = deriveKey(base);
    for (const change of [
      { name: 'Zoë Mueller' },
      { address: 'Hauptstraße 2, Berlin' },
      { country: 'AT' },
      { currency: 'CHF' },
      { application_date: '2024-03-02' },
    ]) {
      expect(deriveKey({ ...base, ...change })).not.toBe(key);
    }
    const { currency: _c, ...withoutCurrency } = base;
    expect(deriveKey(withoutCurrency)).not.toBe(key);
  });
});

describe('deriveKey, by its definition', () => {
  // The derivation as documented, written the slow way: the direct path must give the same key.
  const reference = (fields: ClientFields) => {
    const folded = (text: string) => text.normalize('NFC').replace(/\s+/gu, ' ');
    const canonical = JSON.stringify([
      'ccs-bulk/1',
      folded(fields.name),
      folded(fields.email).toLowerCase(),
      fields.country,
      folded(fields.address),
      fields.currency ?? '',
      fields.application_date ?? '',
      fields.liquidity_type,
    ]);
    return `ccsb_${createHash('sha256').update(canonical).digest('hex').slice(0, 40)}`;
  };

  it('gives the same key as the definition for any text, plain or not', () => {
    const odd = fc.constantFrom(' ', '  ', '\t', '"', '\\', '\u0001', '\u007f', '\u00a0', 'é', 'e\u0301', '\u02ff', '\u0300', 'İ', 'ß', '\ud800', '😀');
    const text = fc.oneof(
      fc.array(fc.oneof(fc.string({ maxLength: 6 }), odd), { maxLength: 6 }).map((parts) => parts.join('')),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('Zoë Müller', 'Łukasz Groß', "O'Brien", '"Best" Imports Ltd 3', '12 Hauptstraße, 10012 Kraków'),
    );
    const fields = fc.record(
      {
        name: text,
        email: text,
        country: text,
        address: text,
        currency: text,
        application_date: text,
        liquidity_type: text,
      },
      { requiredKeys: ['name', 'email', 'country', 'address', 'liquidity_type'] },
    );
    fc.assert(
      fc.property(fields, (value) => {
        expect(deriveKey(value)).toBe(reference(value));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('fold', () => {
  it('is NFC with every run of white space as one space, whatever the text', () => {
    const space = fc.constantFrom(' ', '  ', '\t', '\n', '\r\n', '\u00a0', ' \u00a0', '\u2003', '\u3000', '\ufeff', '\u2028');
    const word = fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('Zoë', 'Zoe\u0308', 'Müller', 'Å', 'A\u030a', 'x'));
    const text = fc.array(fc.oneof(word, space), { maxLength: 8 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(text, fc.string({ unit: 'binary' })), (value) => {
        expect(fold(value)).toBe(value.normalize('NFC').replace(/\s+/gu, ' '));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('canonicalJson', () => {
  it('writes exactly what JSON.stringify writes, escapes and surrogates included', () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }));
    fc.assert(
      fc.property(fc.array(text, { maxLength: 9 }), (parts) => {
        expect(canonicalJson(parts)).toBe(JSON.stringify(parts));
      }),
      { numRuns: 2000 },
    );
    expect(canonicalJson(['\ud800', 'a'])).toBe(JSON.stringify(['\ud800', 'a']));
  });
});

describe('KeySet', () => {
  it('remembers the first row of each key through growth', () => {
    const set = new KeySet();
    for (let i = 1; i <= 50_000; i++) expect(set.add(`key-${i}`, i)).toBeUndefined();
    for (let i = 1; i <= 50_000; i += 997) expect(set.add(`key-${i}`, 99_999)).toBe(i);
    expect(set.size).toBe(50_000);
    const derived = deriveKey(base);
    expect(set.has(derived)).toBe(false);
    set.add(derived, 7);
    expect(set.get(derived)).toBe(7);
    expect(set.get('absent')).toBeUndefined();
    // Sized once for a whole file (any size, not a power of two), nothing is lost.
    set.reserve(123_457);
    for (let i = 1; i <= 50_000; i += 997) expect(set.get(`key-${i}`)).toBe(i);
    for (let i = 50_001; i <= 120_000; i++) expect(set.add(`key-${i}`, i)).toBeUndefined();
    expect(set.size).toBe(120_001);
    expect(set.get(derived)).toBe(7);
  });
});
