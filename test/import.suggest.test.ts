import { describe, expect, it } from 'vitest';
import { mapColumns } from '../src/import/row/columns.js';
import { emailTypo, suggestDomain } from '../src/import/row/email-typos.js';
import fc from 'fast-check';
import { editDistance, letterMask, suggestCountry, suggestCurrency } from '../src/import/row/suggest.js';
import { rowValidator } from '../src/import/row/validate-row.js';

describe('editDistance (optimal string alignment)', () => {
  it.each([
    ['', '', 3, 0],
    ['abc', 'abc', 3, 0],
    ['germny', 'germany', 3, 1],
    ['untied', 'united', 3, 1], // a swap is one edit
    ['gmial', 'gmail', 3, 1],
    ['ca', 'abc', 3, 3], // OSA, not unrestricted Damerau (which says 2)
    ['kitten', 'sitting', 3, 3],
    ['kitten', 'sitting', 2, 3], // over the bound: max + 1
    ['a', 'abcdef', 2, 3], // lengths alone exceed the bound
    ['', 'ab', 5, 2],
  ])('%j vs %j (max %i) = %i', (a, b, max, expected) => {
    expect(editDistance(a, b, max)).toBe(expected);
    expect(editDistance(b, a, max)).toBe(expected);
  });
});

describe('the letter-set bound that skips candidates', () => {
  const popcount = (n: number) => n.toString(2).replaceAll('0', '').length;
  it('never exceeds the edit distance, so it never skips the nearest value', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'e', 'n', 'r', 'y', ' ', '1', 'é'), maxLength: 9 });
    fc.assert(
      fc.property(word, word, (a, b) => {
        const [x, y] = [letterMask(a), letterMask(b)];
        const bound = Math.max(popcount(x & ~y), popcount(y & ~x));
        expect(bound).toBeLessThanOrEqual(editDistance(a, b, 20));
        // And the bounded distance is exact within its bound.
        expect(editDistance(a, b, 3)).toBe(Math.min(editDistance(a, b, 20), 4));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('suggestions', () => {
  it.each([
    ['Germny', 'Germany (DE)'],
    ['germnay', 'Germany (DE)'],
    ['Untied States', 'United States (US)'],
    ['Untied Kingdom', 'United Kingdom (GB)'],
    ['Frnace', 'France (FR)'],
    ['Swtizerland', 'Switzerland (CH)'],
    // One edit from DEU and from EEUU (Spanish for the USA): two answers, none given.
    ['DEUU', undefined],
    ['Xyzzy', undefined], // nothing near
    ['DX', undefined], // two-letter codes are too dense to guess between
    ['Austrai', 'Austria (AT)'], // a swap away; Australia is two edits
    ['Nigera', undefined], // Niger and Nigeria, one edit each: a tie is no suggestion
  ])('country %j → %j', (value, expected) => {
    expect(suggestCountry(value)).toBe(expected);
  });

  it.each([
    ['EURO', 'EUR'],
    ['euros', 'EUR'],
    ['Euro', 'EUR'],
    ['Pund Sterling', 'GBP'],
    ['US Dolar', 'USD'],
    ['dollar', undefined], // many dollars
    ['QQQQQ', undefined],
    ['E', undefined],
  ])('currency %j → %j', (value, expected) => {
    expect(suggestCurrency(value)).toBe(expected);
  });

  it.each([
    ['gmial.com', 'gmail.com'],
    ['gmail.con', 'gmail.com'],
    ['gmial.con', 'gmail.com'],
    ['hotmial.com', 'hotmail.com'],
    ['hotmial.co.uk', 'hotmail.co.uk'],
    ['yahooo.com', 'yahoo.com'],
    ['outlok.com', 'outlook.com'],
    ['googlemial.com', 'googlemail.com'],
    ['example.con', 'example.com'],
    ['example.ogr', 'example.org'],
    ['gmail.com', undefined],
    ['yahoo.fr', undefined], // a provider's own country domain is real
    ['ymail.com', undefined], // real providers near a big one
    ['email.com', undefined],
    ['mail.com', undefined],
    ['example.com', undefined],
    ['acme.ne', undefined], // Niger's domain, not a slip
    ['localhost', undefined],
  ])('domain %j → %j', (domain, expected) => {
    expect(suggestDomain(domain)).toBe(expected);
  });

  it('keeps the local part as typed in the e-mail suggestion', () => {
    expect(emailTypo('Ann.Lee@GMIAL.com')).toBe('mistyped domain "GMIAL.com" (did you mean Ann.Lee@gmail.com?)');
    expect(emailTypo('ann@example.com')).toBeUndefined();
  });
});

describe('row messages carry the suggestion, and the row stays invalid', () => {
  const headers = ['name', 'email', 'country', 'address', 'currency'];
  const validate = rowValidator(mapColumns('t.csv', headers, {}), { dateFormat: 'YYYY-MM-DD', liquidityType: 'chain' });

  it('names the nearest known value', () => {
    expect(validate(['Ann', 'ann@gmial.com', 'Germny', 'Street 1', 'EUR0'])).toEqual({
      ok: false,
      issues: [
        'email: mistyped domain "gmial.com" (did you mean ann@gmail.com?)',
        'country: unknown country "Germny" (did you mean Germany (DE)?)',
        'currency: not an ISO 4217 currency code ("EUR0"; did you mean EUR?)',
      ],
    });
  });

  it('keeps the general hint when nothing is near, and one message for a malformed address', () => {
    expect(validate(['Ann', 'not mail@gmial.con', 'Xyzzy', 'Street 1', 'QQQ'])).toEqual({
      ok: false,
      issues: [
        'email: not an e-mail address ("not mail@gmial.con")',
        'country: unknown country "Xyzzy" (use ISO 3166 alpha-2, alpha-3 or its name)',
        'currency: not an ISO 4217 currency code ("QQQ")',
      ],
    });
  });

  it('accepts what it accepted before', () => {
    const result = validate(['Ann', 'ann@yahoo.fr', 'Germany', 'Street 1', 'eur']);
    expect(result).toMatchObject({ ok: true, value: { email: 'ann@yahoo.fr', country: 'DE', currency: 'EUR' } });
  });
});
