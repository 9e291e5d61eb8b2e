/**
 * The shared 64-bit fingerprint table (src/infra/fingerprints.ts): what import's key set and the
 * export's pager rely on — growth and sizing keep every print and value, the 0:0 print (the
 * empty slot's mark) is stored like any other, and a table without values holds 8 bytes a slot.
 */
import { describe, expect, it } from 'vitest';
import { idHash } from '../src/export/id-set.js';
import { fingerprint, PrintTable, quickPrint } from '../src/infra/fingerprints.js';

describe('PrintTable', () => {
  it('keeps every print through growth and a one-off sizing; 8 bytes a slot without values', () => {
    const table = new PrintTable();
    for (let i = 0; i < 100_000; i++) expect(table.add(fingerprint(`cli_${i}`))).toBeUndefined();
    expect(table.size).toBe(100_000);
    for (let i = 0; i < 100_000; i += 101) expect(table.has(fingerprint(`cli_${i}`))).toBe(true);
    expect(table.has(fingerprint('cli_100000'))).toBe(false);
    expect(table.add(fingerprint('cli_7'))).toBe(0);
    expect(table.size).toBe(100_000);
    // At most 80% full, doubled as it fills: 8 bytes a slot, so 10–20 bytes a print.
    expect(table.bytes / table.size).toBeGreaterThanOrEqual(10);
    expect(table.bytes / table.size).toBeLessThanOrEqual(20);
    table.reserve(250_001);
    expect(table.room).toBeGreaterThanOrEqual(250_001);
    for (let i = 0; i < 100_000; i += 101) expect(table.has(fingerprint(`cli_${i}`))).toBe(true);
  });

  it('stores values with the prints when asked, and the 0:0 print like any other', () => {
    const table = new PrintTable({ values: true, capacity: 8 });
    expect(table.has({ hi: 0, lo: 0 })).toBe(false);
    expect(table.add({ hi: 0, lo: 0 }, 5)).toBeUndefined();
    expect(table.get({ hi: 0, lo: 0 })).toBe(5);
    expect(table.add({ hi: 0xffff_ffff, lo: 0xffff_ffff }, 6)).toBeUndefined();
    for (let i = 1; i <= 50; i++) table.add({ hi: i, lo: i * 7919 }, i + 100);
    expect(table.get({ hi: 0, lo: 0 })).toBe(5);
    expect(table.get({ hi: 0xffff_ffff, lo: 0xffff_ffff })).toBe(6);
    expect(table.get({ hi: 33, lo: 33 * 7919 })).toBe(133);
    expect(table.add({ hi: 33, lo: 33 * 7919 }, 999)).toBe(133);
    expect(table.get({ hi: 1, lo: 2 })).toBeUndefined();
    expect(table.size).toBe(52);
    // 12 bytes a slot with values (grown from 8 slots to 128 here).
    expect(table.bytes).toBe(128 * 12);
  });

  it('prints the first 64 bits of the SHA-256, as the --new-since-last state hashes an id', () => {
    // sha256('abc') = ba7816bf 8f01cfea …
    expect(fingerprint('abc')).toEqual({ hi: 0xba7816bf, lo: 0x8f01cfea });
    expect(idHash('abc')).toBe(0xba7816bf8f01cfean);
  });

  it('the quick print is stable, uses both halves, and tells apart 200,000 ids one character apart', () => {
    expect(quickPrint('cli_0001')).toEqual(quickPrint('cli_0001'));
    const table = new PrintTable();
    const his = new Set<number>();
    for (let i = 0; i < 200_000; i++) {
      const print = quickPrint(`cli_${i.toString().padStart(8, '0')}`);
      his.add(print.hi);
      expect(table.add(print)).toBeUndefined();
    }
    // Each half alone spreads too (32 bits over 200,000 ids: a few shared at most).
    expect(his.size).toBeGreaterThan(199_900);
  });
});
