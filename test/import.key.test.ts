import { describe, expect, it } from 'vitest';
import { KeySet } from '../src/import/key-set.js';
import { deriveKey } from '../src/import/key.js';
import type { ClientFields } from '../src/import/validate-row.js';

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
    expect(key).toMatch(/^ccsb_[0-9a-f]{40}$/);
    // Pinned: a change to the derivation would make every earlier import re-create clients.
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
  });
});
