/**
 * Client lists in the language they were written in: German, French, Spanish, Italian,
 * Portuguese and Dutch headers, country names, currency signs and names, and dates with the
 * day first, read without a flag, each change counted; what cannot be read one way (a header
 * of two fields, a name of two countries, `$`, `1/7/2024` in an English file) refused with the
 * readings named. The fixtures in fixtures/input/languages/ were saved by LibreOffice and
 * openpyxl (scripts/make-language-fixtures.py).
 */
import { execFileSync } from 'node:child_process';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FIELDS, foldHeader } from '../src/import/fields.js';
import { HEADER_WORDS, type HeaderTable, LANGUAGES } from '../src/import/fields.js';
import { openRows, peekRows } from '../src/import/read/index.js';
import { mapColumns } from '../src/import/row/columns.js';
import { foldName, namesOf, readCountryName } from '../src/import/row/country-names.js';
import { readCurrencyName } from '../src/import/row/currency-names.js';
import { settleDateOrder } from '../src/import/row/date-order.js';
import { readDate } from '../src/import/row/dates.js';
import { toCountryCode, toCurrencyCode } from '../src/import/row/normalize.js';
import { suggestCountry } from '../src/import/row/suggest.js';
import { rowValidator } from '../src/import/row/validate-row.js';
import { readResults, runCliInProcess as runCli, useSandbox } from './helpers.js';

const ROOT = join(import.meta.dirname, '..');
const FIXTURES = join(ROOT, 'fixtures', 'input', 'languages');
const ctx = useSandbox();

describe('the header table', () => {
  it('has words for every field in every language', () => {
    for (const language of LANGUAGES) for (const field of FIELDS) expect(HEADER_WORDS[language][field].length, `${language} ${field}`).toBeGreaterThan(0);
  });

  it('gives no folded word to two fields (a real header would be refused)', () => {
    const fieldOf = new Map<string, string>();
    for (const language of LANGUAGES) {
      for (const field of FIELDS) {
        for (const word of HEADER_WORDS[language][field]) {
          const known = fieldOf.get(foldHeader(word));
          expect(known === undefined || known === field, `${word} (${language}) is ${known} and ${field}`).toBe(true);
          fieldOf.set(foldHeader(word), field);
        }
      }
    }
  });

  it.each([
    ['German', ['Kundennr.', 'Name', 'E-Mail', 'Land', 'Anschrift', 'Währung', 'Antragsdatum', 'Bemerkung']],
    ['French', ['Nom', 'Courriel', 'Pays', 'Adresse', 'Devise', 'Date de demande']],
    ['Spanish', ['Nombre', 'Correo electrónico', 'País', 'Dirección', 'Moneda', 'Fecha de solicitud']],
    ['Italian', ['Nome', 'Posta elettronica', 'Paese', 'Indirizzo', 'Valuta', 'Data richiesta']],
    ['Portuguese', ['Nome', 'Endereço de e-mail', 'País', 'Morada', 'Moeda', 'Data do pedido']],
    ['Dutch', ['Naam', 'E-mailadres', 'Land', 'Adres', 'Valuta', 'Aanvraagdatum']],
  ])('reads a %s header row, and says which language read each column English would not', (language, headers) => {
    const plan = mapColumns('t.csv', headers, {});
    expect(Object.keys(plan.columns).sort()).toEqual(['address', 'application_date', 'country', 'currency', 'email', 'name']);
    expect(plan.languages.country).toBe(LANGUAGES.find((code) => ({ de: 'German', fr: 'French', es: 'Spanish', it: 'Italian', pt: 'Portuguese', nl: 'Dutch' })[code as 'de'] === language));
    expect(plan.languages.email === undefined || plan.languages.email === plan.language).toBe(true);
  });

  it('takes the file language for a word two languages share: "Land" is German beside German headers, Dutch beside Dutch', () => {
    expect(mapColumns('t.csv', ['Name', 'E-Mail', 'Land', 'Anschrift'], {}).languages.country).toBe('de');
    expect(mapColumns('t.csv', ['Naam', 'E-mail', 'Land', 'Adres'], {}).languages.country).toBe('nl');
  });

  it('refuses a header that reads as two fields in two languages, naming both', () => {
    const table = structuredClone(HEADER_WORDS) as HeaderTable;
    table.nl = { ...table.nl, address: [...table.nl.address, 'Pays'] };
    expect(() => mapColumns('t.csv', ['Nom', 'Courriel', 'Pays', 'Rue'], {}, 1, 'line', table)).toThrow(
      't.csv: column 3 "Pays" is the French header of country and the Dutch header of address; say which with --map (--map country=Pays or --map address=Pays)',
    );
    // --map settles it.
    expect(mapColumns('t.csv', ['Nom', 'Courriel', 'Pays', 'Rue'], { country: 'Pays' }, 1, 'line', table).columns).toMatchObject({ country: 2, address: 3 });
  });

  it('falls back to English for a language it does not know (Swedish): the required columns are missing', async () => {
    const file = join(ctx.dir, 'swedish.csv');
    await writeFile(file, 'Namn,E-post,Land,Adress\nAnna,anna@example.se,SE,Gatan 1\n');
    const run = await runCli(['validate', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('missing required columns name, email, address');
  });
});

describe('country names', () => {
  it.each([
    ['Deutschland', 'DE'], ['Österreich', 'AT'], ['Schweiz', 'CH'], ['Frankreich', 'FR'], ['Vereinigtes Königreich', 'GB'],
    ['BRD', 'DE'], ['USA', 'US'], ['U.S.A.', 'US'], ['UK', 'GB'], ['Grande-Bretagne', 'GB'], ['Holland', 'NL'],
    ['Türkei', 'TR'], ['Turquie', 'TR'], ['Allemagne', 'DE'], ['Alemania', 'DE'], ['Germania', 'DE'], ['Alemanha', 'DE'],
    ['Duitsland', 'DE'], ['EE.UU.', 'US'], ['osterreich', 'AT'], ['Grossbritannien', 'GB'], ['DEU', 'DE'], ['de', 'DE'],
  ])('%s → %s', (name, code) => {
    expect(toCountryCode(name)).toBe(code);
  });

  it('refuses a name two countries share, with both readings', () => {
    expect(readCountryName('São Martinho').map((r) => r.code).sort()).toEqual(['MF', 'SX']);
    const validate = rowValidator(mapColumns('t.csv', ['name', 'email', 'country', 'address'], {}), { dateFormat: 'auto', liquidityType: 'chain' });
    expect(validate(['A', 'a@example.com', 'São Martinho', 'S 1'])).toEqual({
      ok: false,
      issues: ['country: ambiguous country "São Martinho": it reads as MF (Saint Martin (French part)) in Portuguese, or SX (Sint Maarten (Dutch part)) in Portuguese; write its ISO code'],
    });
  });

  it('no English name means another country in another language: an English hit needs no other language', () => {
    const english = new Map<string, string>();
    for (const [code, names] of Object.entries(namesOf('en'))) for (const name of names) english.set(foldName(name), code);
    for (const language of LANGUAGES.filter((l) => l !== 'en')) {
      for (const [code, names] of Object.entries(namesOf(language))) {
        for (const name of names) {
          const other = english.get(foldName(name));
          expect(other === undefined || other === code || foldName(name) === 'congo', `${name} (${language}) is ${code}, English ${other}`).toBe(true);
        }
      }
    }
  });

  it('suggests for misspellings in any language', () => {
    expect(suggestCountry('Deutschalnd')).toBe('Deutschland (DE)');
    expect(suggestCountry('Östereich')).toBe('Österreich (AT)');
    expect(suggestCountry('Allemagen')).toBe('Allemagne (DE)');
    expect(suggestCountry('Germny')).toBe('Germany (DE)');
  });

  it('loads only English for codes and English names, the other languages at the first name English lacks', () => {
    const url = pathToFileURL(join(ROOT, 'dist', 'import', 'row', 'normalize.js')).href;
    const names = pathToFileURL(join(ROOT, 'dist', 'import', 'row', 'country-names.js')).href;
    const script = `const n = await import(${JSON.stringify(url)}); const c = await import(${JSON.stringify(names)});
      const seen = []; n.toCountryCode('DE'); n.toCountryCode('DEU'); seen.push(c.loadedLanguages().join());
      n.toCountryCode('Germany'); seen.push(c.loadedLanguages().join());
      n.toCountryCode('Deutschland'); seen.push(c.loadedLanguages().join()); console.log(JSON.stringify(seen));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual(['', 'en', 'en,de,fr,es,it,pt,nl']);
  });
});

describe('currencies as people write them', () => {
  it.each([
    ['€', 'EUR'], ['£', 'GBP'], ['¥', 'JPY'], ['zł', 'PLN'], ['Kč', 'CZK'], ['CHF', 'CHF'], ['chf', 'CHF'], ['Fr.', 'CHF'], ['SFr.', 'CHF'],
    ['Franken', 'CHF'], ['Euro', 'EUR'], ['euros', 'EUR'], ['EURO', 'EUR'], ['Schweizer Franken', 'CHF'], ['dollar canadien', 'CAD'],
    ['US-Dollar', 'USD'], ['francs suisses', 'CHF'], ['libra esterlina', 'GBP'], ['US$', 'USD'],
  ])('%s → %s', (written, code) => {
    expect(toCurrencyCode(written)).toBe(code);
  });

  it('refuses $ and kr, naming the candidates', () => {
    expect(readCurrencyName('$')).toEqual(['USD', 'CAD', 'AUD', 'NZD', 'MXN', 'ARS']);
    expect(toCurrencyCode('$')).toBeUndefined();
    const validate = rowValidator(mapColumns('t.csv', ['name', 'email', 'country', 'address', 'currency'], {}), { dateFormat: 'auto', liquidityType: 'chain' });
    expect(validate(['A', 'a@example.com', 'DE', 'S 1', 'kr'])).toEqual({
      ok: false,
      issues: ['currency: not an ISO 4217 currency code ("kr" could be SEK, NOK, DKK or ISK; write the code)'],
    });
  });
});

describe('dates as people write them', () => {
  it.each([
    ['31.12.2024', 'day', '2024-12-31', 'DD.MM.YYYY'],
    ['1.7.2024', 'day', '2024-07-01', 'DD.MM.YYYY'],
    ['31/12/2024', 'ask', '2024-12-31', 'DD/MM/YYYY'],
    ['31-12-2024', 'day', '2024-12-31', 'DD-MM-YYYY'],
    ['12/31/2024', 'ask', '2024-12-31', 'MM/DD/YYYY'],
    ['1/7/2024', 'month', '2024-01-07', 'MM/DD/YYYY'],
    ['2024-07-01', 'iso', '2024-07-01', 'YYYY-MM-DD'],
    ['15.02.2024 00:00', 'day', '2024-02-15', 'DD.MM.YYYY'],
  ] as const)('%s (order %s) → %s, read as %s', (value, order, iso, form) => {
    expect(readDate(value, order)).toEqual({ iso, form });
  });

  it.each([
    ['1.7.24', 'day', 'not a real date in DD.MM.YYYY ("1.7.24"): the year has two digits; write it in full (2024 or 1924?)'],
    ['31.02.2024', 'day', 'not a real date in DD.MM.YYYY ("31.02.2024")'],
    ['1/7/2024', 'ask', 'day and month order unknown ("1/7/2024": 1/7 could be either): the file does not say; give --date-format DD/MM/YYYY or MM/DD/YYYY'],
    ['31.12.2024', 'iso', 'not a real date in YYYY-MM-DD ("31.12.2024")'],
    ['31-12-2024', 'month', 'not a real date in MM-DD-YYYY ("31-12-2024")'],
  ] as const)('refuses %s (order %s) clearly', (value, order, problem) => {
    expect(readDate(value, order)).toEqual({ problem });
  });

  const record = (line: number, value: string) => ({ row: line - 1, line, values: [value] });
  const plan = (language: 'en' | 'de') => ({ columns: { application_date: 0 }, language });

  it('settles the order: --date-format, else a day over 12, else the headers\' language, else asks', () => {
    expect(settleDateOrder('DD.MM.YYYY', plan('en'), [])).toMatchObject({ order: 'day', why: '--date-format DD.MM.YYYY' });
    expect(settleDateOrder('auto', plan('en'), [record(2, '1/7/2024'), record(3, '13/7/2024')])).toMatchObject({
      order: 'day',
      why: '"13/7/2024" on line 3 has a day over 12',
    });
    expect(settleDateOrder('auto', plan('de'), [record(2, '7/13/2024')])).toMatchObject({ order: 'month' });
    expect(settleDateOrder('auto', plan('de'), [record(2, '1.7.2024')])).toMatchObject({ order: 'day', why: 'the headers are German' });
    expect(settleDateOrder('auto', plan('en'), [record(2, '1/7/2024')])).toMatchObject({ order: 'ask', seen: true });
    expect(settleDateOrder('auto', plan('en'), [record(2, '13/7/2024'), record(3, '7/13/2024')]).order).toBe('ask');
  });

  it('--date-format DD.MM.YYYY is accepted, and an English file with 1/7/2024 asks for it by name', async () => {
    const file = join(ctx.dir, 'english-dates.csv');
    await writeFile(file, 'name,email,country,address,application_date\nA,a@example.com,DE,S 1,1/7/2024\nB,b@example.com,DE,S 2,2024-03-01\n');
    const asked = await runCli(['validate', file, '--results', join(ctx.dir, 'ed1.csv')]);
    expect(asked.code).toBe(1);
    expect(asked.stderr).toContain('dates: day/month order unknown');
    expect(asked.stderr).toContain('give --date-format DD/MM/YYYY or MM/DD/YYYY');
    const told = await runCli(['validate', file, '--date-format', 'DD.MM.YYYY', '--results', join(ctx.dir, 'ed2.csv')]);
    expect(told.code, told.stderr).toBe(0);
    expect(told.stderr).toContain('dates: day first (31.12.2024): --date-format DD.MM.YYYY');
    expect(told.stderr).toContain('application_date read as DD/MM/YYYY ×1');
  });
});

describe('the fixtures, validated and imported with no flags', () => {
  it('a German Excel CSV (windows-1252, ;, a title): German headers, names, signs and dates read; the planted errors named', async () => {
    const file = join(ctx.dir, 'german-excel.csv');
    await copyFile(join(FIXTURES, 'german-excel.csv'), file);
    const run = await runCli(['validate', file]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('columns: name ← "Name", email ← "E-Mail", country ← "Land" (German), address ← "Anschrift" (German)');
    expect(run.stderr).toContain('dates: day first (31.12.2024): "15.03.2024" on line 5 has a day over 12');
    expect(run.stderr).toContain('header: line 3; lines 1, 2 above it skipped (not data)');
    expect(run.stderr).toContain('Validated 40 rows');
    expect(run.stderr).toContain('30 valid, 9 invalid, 1 duplicate');
    for (const text of [
      'unknown country "Deutschalnd" (did you mean Deutschland (DE)?)',
      'unknown country "Östereich" (did you mean Österreich (AT)?)',
      'not a real date in DD.MM.YYYY ("31.02.2024")',
      '("1.7.24"): the year has two digits',
      'mistyped domain "gmial.com"',
      '"$" could be USD, CAD',
      'application_date read as DD.MM.YYYY ×31',
      'country "Schweiz" → "CH" ×5',
      'currency "Euro" → "EUR" ×5',
    ]) expect(run.stderr).toContain(text);
    const results = await readResults(`${file}.results.csv`);
    expect(results.filter((line) => line[1] === 'duplicate')).toHaveLength(1);
    // Ł has no byte in windows-1252: the save wrote "?ukasz", and the run says so.
    expect(run.stderr).toContain(
      'warning: line 14 holds "?" inside a word ("?ukasz Król" in "Name"): the program that saved this windows-1252 file had no such letter',
    );

    const imported = await runCli(['import', file, '--overwrite'], { env: ctx.env() });
    expect(imported.code, imported.stderr).toBe(1);
    expect(imported.stderr).toContain('30 created');
    expect(imported.stderr).toContain('warning: line 14 holds "?" inside a word');
    const sent = ctx.sandbox.store.all().filter((client) => client.email.endsWith('@example.de'));
    expect(new Set(sent.map((client) => client.country))).toEqual(new Set(['AT', 'CH', 'FR', 'GB', 'DE', 'NL']));
    expect(sent.find((client) => client.email === 'kunde2@example.de')).toMatchObject({ currency: 'EUR', country: 'CH' });
  });

  it('a French workbook: date cells exact, a date typed as text read day first, French names and currencies', async () => {
    const file = join(ctx.dir, 'french.xlsx');
    await copyFile(join(FIXTURES, 'french.xlsx'), file);
    const run = await runCli(['validate', file]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('columns: name ← "Nom" (French), email ← "Courriel" (French), country ← "Pays" (French)');
    expect(run.stderr).toContain('dates: day first (31.12.2024): "31/12/2024" on row 7 has a day over 12');
    expect(run.stderr).toContain('28 valid, 2 invalid, 0 duplicate');
    expect(run.stderr).toContain('unknown country "Allemagen" (did you mean Allemagne (DE)?)');
    expect(run.stderr).toContain('currency "euros" → "EUR"');
    const imported = await runCli(['import', file, '--overwrite'], { env: ctx.env() });
    expect(imported.stderr).toContain('28 created');
    const client = (email: string) => ctx.sandbox.store.all().find((c) => c.email === email);
    // A date cell (formatted dd/mm/yyyy) as the workbook holds it; the text "1/7/2024" as 1 July.
    expect(client('client1@example.fr')).toMatchObject({ country: 'FR', currency: 'EUR' });
    expect(client('client7@example.fr')).toMatchObject({ country: 'TR', currency: 'CHF' });
    const source = await openRows(file, {});
    const { rows } = await peekRows(source, 50);
    await source.close();
    const plan = mapColumns(file, source.headers, {});
    const validate = rowValidator(plan, { dateFormat: 'auto', liquidityType: 'chain', dates: settleDateOrder('auto', plan, rows, 'row') });
    const dateOf = (index: number) => {
      const checked = validate(rows[index]!.values);
      return checked.ok ? checked.value.application_date : checked.issues;
    };
    expect([dateOf(0), dateOf(5), dateOf(6)]).toEqual(['2024-02-06', '2024-12-31', '2024-07-01']);
    const results = await readResults(`${file}.results.csv`);
    expect(results.filter((line) => line[1] === 'created')).toHaveLength(28);
  });

  it('a Spanish CSV (;, UTF-8): Spanish headers, EE.UU., Holanda, dates with dashes', async () => {
    const file = join(ctx.dir, 'spanish.csv');
    await copyFile(join(FIXTURES, 'spanish.csv'), file);
    const run = await runCli(['validate', file]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('columns: name ← "Nombre" (Spanish), email ← "Correo electrónico" (Spanish), country ← "País" (Spanish)');
    expect(run.stderr).toContain('26 valid, 4 invalid, 0 duplicate');
    expect(run.stderr).toContain('unknown country "Alemana" (did you mean Alemania (DE)?)');
    expect(run.stderr).toContain('country "EE.UU." → "US"');
    expect(run.stderr).toContain('application_date read as DD/MM/YYYY ×25');
  });
});

describe('a "?" where a single-byte save lost a letter', () => {
  const rows = ['name;email;country;address', '?ukasz Kr?l;l@example.pl;PL;Ulica 1', 'Kunde?;k@example.de;DE;Weg 2', 'Ewa;e@example.pl;PL;?ód? 3', ''];

  it('names the rows in a windows-1252 file, not a question mark that ends a word', async () => {
    const file = join(ctx.dir, 'lost.csv');
    // A first row with ß (one byte, 0xDF) before the others: windows-1252 as Excel saves it.
    const lines = [rows[0], 'Straße;x@example.de;DE;Weg', ...rows.slice(1)];
    await writeFile(file, Buffer.from(lines.join('\r\n'), 'latin1'));
    const run = await runCli(['validate', file, '--encoding', 'windows-1252', '--results', join(ctx.dir, 'lost.r.csv')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('warning: lines 3, 5 hold "?" inside a word ("?ukasz Kr?l" in "name")');
    expect(run.stderr).toContain('save it as .xlsx or "CSV UTF-8" and run again');
  });

  it('says nothing for a UTF-8 file: it has every letter, a "?" there is what was typed', async () => {
    const file = join(ctx.dir, 'typed.csv');
    await writeFile(file, rows.join('\n'));
    const run = await runCli(['validate', file, '--results', join(ctx.dir, 'typed.r.csv')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('inside a word');
  });
});
