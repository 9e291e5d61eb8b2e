/**
 * Lists exported from the systems people migrate from import as they are: each fixture has
 * the header row its product writes (scripts/make-crm-fixtures.mjs), is recognized with no
 * flag, and its first three clients reach the sandbox with the name and the address put
 * together from their parts, in the order each client's country writes them (one report
 * with clients of five countries shows each order). The data tables themselves are checked
 * row by row: every kind is recognized by its own signature and none other; each country's
 * order is the one the table gives it.
 */
import { existsSync } from 'node:fs';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADDRESS_ORDERS, addressOrderOf, orderedAddress } from '../src/import/row/address-order.js';
import { EXPORT_KINDS } from '../src/import/row/crm-exports.js';
import { recognizeExport } from '../src/import/row/recognize.js';
import { mapColumns } from '../src/import/row/columns.js';
import { ROOT, runCliInProcess as runCli, useSandbox } from './helpers.js';

const ctx = useSandbox();

interface Expected {
  recognized: string;
  /** email → [name, address], the file's first three rows. */
  clients: [string, string, string][];
  /** Rows the file holds that are invalid on purpose (exit 1). */
  invalid?: number;
}

const EXPORTS: Record<string, Expected> = {
  'salesforce-contacts.csv': {
    recognized:
      'a Salesforce contacts report; name ← "First Name" + "Last Name"; ' +
      'address ← "Mailing Street", "Mailing City", "Mailing State/Province", "Mailing Zip/Postal Code" (in each country\'s order)',
    clients: [
      ['ana.souza@sf-contacts.example', 'Ana Souza', 'Rua Augusta 10, 1100-053 Lisboa'],
      ['bo.li@sf-contacts.example', 'Bo Li', '5 Main St, Boston, MA 02110'],
      ['claire.martin@sf-contacts.example', 'Claire Martin', '12 rue Haute, 69001 Lyon'],
    ],
    // Dev Patel has no mailing address: every part empty is an empty address.
    invalid: 1,
  },
  // Exported with "Export Details": Salesforce's footer after the rows is no row (exit 0).
  'salesforce-contacts-details.csv': {
    recognized: 'a Salesforce contacts report',
    clients: [
      ['kai.weber@sf-details.example', 'Kai Weber', 'Unter den Linden 5, 10117 Berlin'],
      ['lena.park@sf-details.example', 'Lena Park', '9 Pine St, Portland, OR 97204'],
    ] as unknown as [string, string, string][],
  },
  'salesforce-leads.csv': {
    recognized: 'a Salesforce leads report',
    clients: [
      ['erin.walsh@sf-leads.example', 'Erin Walsh', '8 Elm Rd, Toronto, ON M5V 2T6'],
      ['farid.haddad@sf-leads.example', 'Farid Haddad', '400 Pine St, Seattle, WA 98101'],
      ['greta.berg@sf-leads.example', 'Greta Berg', 'Storgatan 1, 111 22 Stockholm'],
    ],
  },
  'salesforce-accounts.csv': {
    recognized: 'a Salesforce accounts report',
    clients: [
      ['ap@acme-foods.sf-accounts.example', 'Acme Foods Inc', '1 Market St, San Francisco, CA 94105'],
      ['info@nordlicht.sf-accounts.example', 'Nordlicht GmbH', 'Hauptstr. 5, 10115 Berlin'],
      ['hola@olive.sf-accounts.example', 'Olive Tree SL', 'Calle Mayor 3, 28013 Madrid'],
    ],
  },
  'hubspot-contacts.csv': {
    recognized: 'a HubSpot contacts export; name ← "First Name" + "Last Name"; address ← "Street Address", "City", "State/Region", "Postal Code" (in each country\'s order)',
    clients: [
      ['hana.kato@hs-contacts.example', 'Hana Kato', '22 King St W, Toronto, ON M5H 1A1'],
      ['ivan.novak@hs-contacts.example', 'Ivan Novak', 'Národní 1, 110 00 Praha'],
      ['jade.moreau@hs-contacts.example', 'Jade Moreau', '3 Park Ave, Suite 4, New York, NY 10016'],
    ],
  },
  'hubspot-companies.csv': {
    recognized: 'a HubSpot companies export',
    clients: [
      ['hello@kite.hs-companies.example', 'Kite Labs', '9 Harbour Rd, Dublin, D02 X285'],
      ['info@lumen.hs-companies.example', 'Lumen BV', 'Damrak 1, 1012 LG Amsterdam'],
      ['sales@maple.hs-companies.example', 'Maple Co', '77 Queen St, Ottawa, ON K1P 1N2'],
    ],
  },
  'google-contacts.csv': {
    recognized: 'a Google Contacts export; name ← "First Name" + "Middle Name" + "Last Name"',
    clients: [
      ['nina.rossi@google-contacts.example', 'Nina Maria Rossi', 'Via Roma 1, 20121 Milano, MI'],
      ['oscar.lind@google-contacts.example', 'Oscar Lind', '10 Downing St, London, SW1A 2AA'],
      ['pia.schulz@google-contacts.example', 'Pia Schulz', 'Lindenallee 4, 20095 Hamburg'],
    ],
  },
  'outlook-contacts.csv': {
    recognized: 'an Outlook contacts export; name ← "First Name" + "Middle Name" + "Last Name"',
    clients: [
      ['quinn.adams@outlook-contacts.example', 'Quinn Adams', '100 Congress Ave, Floor 3, Austin, TX 78701'],
      ['rene.fournier@outlook-contacts.example', 'René J. Fournier', '5 place Bellecour, 69002 Lyon'],
      ['sara.costa@outlook-contacts.example', 'Sara Costa', 'Avenida da Liberdade 50, 1250-096 Lisboa'],
    ],
  },
  'outlook-contacts-de.csv': {
    recognized: 'an Outlook contacts export (German)',
    clients: [
      ['juergen.weiss@outlook-de.example', 'Jürgen Weiß', 'Königstraße 7, 70173 Stuttgart'],
      ['anna.huber@outlook-de.example', 'Anna Huber', 'Mariahilfer Straße 20, 1070 Wien'],
      ['lukas.meier@outlook-de.example', 'Lukas Meier', 'Bahnhofstrasse 1, 8001 Zürich'],
    ],
  },
  'pipedrive-people.csv': {
    recognized: 'a Pipedrive people export',
    clients: [
      ['tomas.ruiz@pd-people.example', 'Tomás Ruiz', 'Gran Vía 12, 3º, 28013 Madrid'],
      ['uma.shah@pd-people.example', 'Uma Shah', 'Keizersgracht 100, 1015 CW Amsterdam'],
      ['victor.lee@pd-people.example', 'Victor Lee', 'Market Street 200, Suite 5, Denver, CO 80202'],
    ],
  },
  'pipedrive-organizations.csv': {
    recognized: 'a Pipedrive organizations export',
    clients: [
      ['office@wolf.pd-orgs.example', 'Wolf Bau GmbH', 'Industriestraße 9, 80339 München, Bayern'],
      ['hello@xenia.pd-orgs.example', 'Xenia Design', 'Rue du Rhône 14, 1204 Genève'],
      ['farm@yarrow.pd-orgs.example', 'Yarrow Farms', 'Country Road 42, Dubbo, NSW 2830'],
    ],
  },
  'zoho-contacts.csv': {
    recognized: 'a Zoho CRM contacts export',
    clients: [
      ['zoe.clark@zoho-contacts.example', 'Zoe Clark', '1 High St, Leeds, LS1 4AP'],
      ['aarav.mehta@zoho-contacts.example', 'Aarav Mehta', '12 MG Road, Bengaluru, Karnataka 560001'],
      ['beatriz.lima@zoho-contacts.example', 'Beatriz Lima', 'Av. Paulista 1000, São Paulo, SP 01310-100'],
    ],
  },
  'zoho-leads.csv': {
    recognized: 'a Zoho CRM leads export',
    clients: [
      ['cora.crane@zoho-leads.example', 'Cora Crane', '4 Bridge St, Cork, T12 X2Y3'],
      ['didier.dune@zoho-leads.example', 'Didier Dune', '8 avenue Foch, 75116 Paris'],
      ['eli.elm@zoho-leads.example', 'Eli Elm', '15 Oak Ave, Chicago, IL 60601'],
    ],
  },
  'dynamics-contacts.xlsx': {
    recognized: 'a Dynamics 365 contacts export',
    clients: [
      ['fatima.zahra@dyn-contacts.example', 'Fatima Zahra', '14 Rue Lafayette, 75009 Paris'],
      ['george.king@dyn-contacts.example', 'George King', '500 Fifth Ave, Suite 200, New York, NY 10110'],
      ['helga.olsen@dyn-contacts.example', 'Helga Olsen', 'Karl Johans gate 1, 0154 Oslo'],
    ],
  },
  'dynamics-accounts.xlsx': {
    recognized: 'a Dynamics 365 accounts export',
    clients: [
      ['orders@iris.dyn-accounts.example', 'Iris Optics Ltd', '2 Canal St, Manchester, M1 3HE'],
      ['ap@jaguar.dyn-accounts.example', 'Jaguar Tools Inc', '75 State St, Albany, NY 12207'],
      ['kia.ora@kiwi.dyn-accounts.example', 'Kiwi Fresh Ltd', '1 Queen St, Auckland, 1010'],
    ],
  },
};

describe('each known export imports with no flags', () => {
  for (const [name, expected] of Object.entries(EXPORTS)) {
    it(`${name}: recognized in the plan, its first three clients created with composed name and address`, async () => {
      const file = join(ctx.dir, name);
      await copyFile(join(ROOT, 'fixtures', 'input', 'crm', name), file);
      const run = await runCli(['import', file], { env: ctx.env() });
      expect(run.code, run.stderr).toBe(expected.invalid === undefined ? 0 : 1);
      expect(run.stderr).toContain(`  recognized: ${expected.recognized}`);
      expect(run.stderr).not.toContain('warning');
      const byEmail = new Map(ctx.sandbox.store.all().map((client) => [client.email, client]));
      for (const [email, clientName, address] of expected.clients) {
        expect(byEmail.get(email), email).toMatchObject({ name: clientName, address });
      }
    });
  }
});

describe("an export's own lines and columns that are no client's", () => {
  const HEADER = ['First Name', 'Last Name', 'Email', 'Mailing Street', 'Mailing City', 'Mailing Zip/Postal Code', 'Mailing Country'];
  const ROW = (tag: string) => ['Mo', 'Reed', `mo.reed@${tag}.example`, '1 Elm St', 'Austin', '78701', 'US'];
  const quoted = (cells: string[]) => `${cells.map((cell) => JSON.stringify(cell)).join(',')}\r\n`;

  it("a Salesforce report's footer: left out of the rows, said in the summary, every row accounted for", async () => {
    const file = join(ctx.dir, 'sf-details.csv');
    await copyFile(join(ROOT, 'fixtures', 'input', 'crm', 'salesforce-contacts-details.csv'), file);
    const run = await runCli(['import', file], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("  footer: 5 lines of Salesforce's export details (lines 5–9), not rows\n");
    expect(run.stderr).toContain('2 rows read (');
    expect(run.stderr).toContain('every row accounted for');
    expect(run.stderr).not.toContain('Copyright');
    expect(existsSync(`${file}.failed.csv`)).toBe(false);
  });

  it('strict: a trailing block without Salesforce\'s copyright line, or a file not recognized as a Salesforce report, keeps its lines as rows', async () => {
    const noCopyright = join(ctx.dir, 'sf-no-copyright.csv');
    await writeFile(noCopyright, quoted(HEADER) + quoted(ROW('no-copyright')) + '\r\n' + quoted(['Report Name']) + quoted(['Acme Holdings Inc']));
    const kept = await runCli(['validate', noCopyright, '--results', `${noCopyright}.r.csv`]);
    expect(kept.code, kept.stderr).toBe(1);
    expect(kept.stderr).toContain('1 valid, 2 invalid');
    expect(kept.stderr).not.toContain('footer:');
    const other = join(ctx.dir, 'not-salesforce.csv');
    const plain = ['Name', 'Email', 'Address', 'Country'];
    await writeFile(other, quoted(plain) + quoted(['Mo Reed', 'mo@plain.example', '1 Elm St', 'US']) + '\r\n' + quoted(['Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved.']));
    const plainRun = await runCli(['validate', other, '--results', `${other}.r.csv`]);
    expect(plainRun.code, plainRun.stderr).toBe(1);
    expect(plainRun.stderr).toContain('1 valid, 1 invalid');
  });

  it('birthdays and anniversaries are ignored columns of the exports that have them, never an application date', async () => {
    const google = await runCli(['validate', join(ROOT, 'fixtures', 'input', 'crm', 'google-contacts.csv'), '--results', join(ctx.dir, 'google-bd.csv')]);
    expect(google.code, google.stderr).toBe(0);
    expect(google.stderr).not.toContain('application_date');
    expect(google.stderr).toMatch(/ignored columns: .*"Birthday"/);
    const sets: [string, string[], string[]][] = [
      ['outlook', ['First Name', 'Last Name', 'E-mail Address', 'Business Street', 'Business City', 'Business Postal Code', 'Business Country/Region', 'Birthday', 'Anniversary'], ['1/2/1980', '6/7/2005']],
      ['outlook-de', ['Vorname', 'Nachname', 'E-Mail-Adresse', 'Straße geschäftlich', 'Ort geschäftlich', 'Postleitzahl geschäftlich', 'Land/Region geschäftlich', 'Geburtstag', 'Jahrestag'], ['2.1.1980', '7.6.2005']],
      ['zoho', ['First Name', 'Last Name', 'Email', 'Contact Owner', 'Mailing Street', 'Mailing City', 'Mailing Zip', 'Mailing Country', 'Date of Birth'], ['1980-01-02']],
      ['salesforce', [...HEADER, 'Birthdate'], ['1/2/1980']],
    ];
    for (const [tag, header, dates] of sets) {
      const file = join(ctx.dir, `${tag}-birthday.csv`);
      const values = header.slice(0, header.length - dates.length).map((_, i) => [ 'Mo', 'Reed', `mo@${tag}.example`, '1 Elm St', 'Austin', '78701', 'US', 'x'][i] ?? 'x');
      if (tag === 'zoho') values.splice(3, 5, 'Sam Rep', '1 Elm St', 'Austin', '78701', 'US');
      await writeFile(file, quoted(header) + quoted([...values, ...dates]));
      const run = await runCli(['import', file], { env: ctx.env() });
      expect(run.code, `${tag}: ${run.stderr}`).toBe(0);
      for (const date of header.slice(header.length - dates.length)) expect(run.stderr, tag).toMatch(new RegExp(`ignored columns: .*"${date}"`));
    }
  });
});

describe('the export table', () => {
  it('recognizes every kind by its own signature, and no kind by another one', () => {
    for (const kind of EXPORT_KINDS) {
      expect(recognizeExport([...kind.signature])?.label, kind.label).toBe(kind.label);
    }
    expect(recognizeExport(['name', 'email', 'country', 'address'])).toBeUndefined();
  });

  it('a Google Contacts header with its Formatted column: the parts are composed, Formatted is listed as ignored', () => {
    const headers = ['First Name', 'Last Name', 'E-mail 1 - Value', 'Address 1 - Formatted', 'Address 1 - Street', 'Address 1 - City', 'Address 1 - Postal Code', 'Address 1 - Country'];
    const plan = mapColumns('g.csv', headers, {});
    expect(plan.recognized?.label).toBe('a Google Contacts export');
    expect(plan.composites.address?.template).toBe('{Address 1 - Street}, {Address 1 - City}, {Address 1 - Postal Code} (by country)');
    expect(plan.unknown).toEqual(['Address 1 - Formatted']);
  });

  it('the exports\' country columns are the country in any file, recognized or not', () => {
    for (const header of ['Country/Region', 'Mailing Country', 'Billing Country', 'Business Country/Region', 'Address 1 - Country']) {
      expect(mapColumns('t.csv', ['Name', 'Email', 'Address', header], {}).columns.country, header).toBe(3);
    }
  });

  it('an export lacking a required column says what it was recognized as', () => {
    expect(() => mapColumns('c.csv', ['Record ID', 'Company name', 'Street Address', 'City', 'State/Region', 'Postal Code', 'Country/Region'], {})).toThrow(
      'missing required column email (recognized: a HubSpot companies export, which has no such column)',
    );
  });
});

describe('the address in the order of each client\'s country', () => {
  const NAME = 'salesforce-contacts-countries.csv';
  /** email → address, every row of the report: Germany, the US, the UK, France (as FR), Austria (as Österreich). */
  const ADDRESSES: [string, string][] = [
    ['jonas.becker@sf-countries.example', 'Friedrichstraße 10, 10117 Berlin'],
    ['maya.brooks@sf-countries.example', '1 Beacon St, Boston, MA 02108'],
    ['oliver.hughes@sf-countries.example', '221B Baker St, London, Greater London, NW1 6XE'],
    ['lea.dubois@sf-countries.example', '8 rue de Rivoli, 75004 Paris, Île-de-France'],
    ['sophie.gruber@sf-countries.example', 'Mariahilfer Straße 1, 1060 Wien'],
  ];
  const PARTS = '"Mailing Street", "Mailing City", "Mailing State/Province", "Mailing Zip/Postal Code" (in each country\'s order)';

  it('one Salesforce report with clients in DE, US, GB, FR and AT: each address in its country\'s order, the plan says so', async () => {
    const file = join(ctx.dir, NAME);
    await copyFile(join(ROOT, 'fixtures', 'input', 'crm', NAME), file);
    const run = await runCli(['import', file], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`address ← ${PARTS}\n`);
    expect(run.stderr).toContain(`  recognized: a Salesforce contacts report; name ← "First Name" + "Last Name"; address ← ${PARTS}\n`);
    // The samples list each part in the columns' order; the value is in the row's country's order.
    expect(run.stderr).toContain(
      '  address: "Friedrichstraße 10, 10117 Berlin" ← "Friedrichstraße 10" + "Berlin" + "" + "10117"; ' +
        '"1 Beacon St, Boston, MA 02108" ← "1 Beacon St" + "Boston" + "MA" + "02108"; ' +
        '"221B Baker St, London, Greater London, NW1 6XE" ← "221B Baker St" + "London" + "Greater London" + "NW1 6XE"\n',
    );
    const byEmail = new Map(ctx.sandbox.store.all().map((client) => [client.email, client]));
    for (const [email, address] of ADDRESSES) expect(byEmail.get(email), email).toMatchObject({ address });
    expect(byEmail.get('lea.dubois@sf-countries.example')).toMatchObject({ name: 'Léa Dubois', country: 'FR' });
  });

  it('--save-mapping keeps the address as a "(by country)" template; --mapping gives the same addresses', async () => {
    const file = join(ctx.dir, `saved-${NAME}`);
    await copyFile(join(ROOT, 'fixtures', 'input', 'crm', NAME), file);
    const mapping = join(ctx.dir, 'sf-countries-mapping.json');
    const saved = await runCli(['validate', file, '--save-mapping', mapping, '--results', `${file}.a.csv`]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(JSON.parse(await readFile(mapping, 'utf8'))).toEqual({
      map: {
        name: '{First Name} {Last Name}',
        email: 'Email',
        country: 'Mailing Country',
        address: '{Mailing Street}, {Mailing City}, {Mailing State/Province} {Mailing Zip/Postal Code} (by country)',
      },
    });
    const report = join(ctx.dir, 'sf-countries-report.html');
    const reused = await runCli(['validate', file, '--mapping', mapping, '--json', '--results', `${file}.b.csv`, '--report', report]);
    expect(reused.code, reused.stderr).toBe(0);
    expect(reused.stderr).toContain(`address ← ${PARTS}`);
    // The review page says it too, beside the template as --map takes it.
    const html = await readFile(report, 'utf8');
    expect(html).toContain("<bdi>Mailing Zip/Postal Code</bdi>, in each country's order</td><td><code>{Mailing Street}, {Mailing City}, {Mailing State/Province} {Mailing Zip/Postal Code} (by country)</code>");
    const summary = JSON.parse(reused.stdout) as { composites: Record<string, { samples: { value: string }[] }> };
    expect(summary.composites.address?.samples.map((sample) => sample.value)).toEqual(ADDRESSES.slice(0, 3).map(([, address]) => address));
  });

  it("a --map template of one's own keeps the order written, whatever the country", async () => {
    const file = join(ctx.dir, `own-${NAME}`);
    await copyFile(join(ROOT, 'fixtures', 'input', 'crm', NAME), file);
    const run = await runCli(['validate', file, '--map', 'address={Mailing Street}, {Mailing City} {Mailing Zip/Postal Code}', '--json', '--results', `${file}.c.csv`]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { composites: Record<string, { samples: { value: string }[] }> };
    expect(summary.composites.address?.samples.map((sample) => sample.value)).toEqual([
      'Friedrichstraße 10, Berlin 10117',
      '1 Beacon St, Boston 02108',
      '221B Baker St, London NW1 6XE',
    ]);
  });

  it('"(by country)" is for a known export\'s address parts only: anything else is a usage error before the file is read', async () => {
    const absent = join(ctx.dir, 'absent.csv');
    const name = await runCli(['validate', absent, '--map', 'name={First Name} {Last Name} (by country)']);
    expect(name.code).toBe(2);
    expect(name.stderr).toContain('"(by country)" orders an address only');
    const other = await runCli(['validate', absent, '--map', 'address={Strasse}, {Ort} (by country)']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('"(by country)" orders the address parts of a known export');
    expect(other.stderr).toContain('[bad_option]');
  });

  it('the order table, row by row: postal code first in continental Europe; city, region, postal code in North America and Australia; the postcode last in the UK and Ireland', () => {
    const orders: [string | undefined, string][] = [
      ['DE', 'postal-city'], ['AT', 'postal-city'], ['CH', 'postal-city'], ['FR', 'postal-city'], ['IT', 'postal-city'], ['ES', 'postal-city'],
      ['PT', 'postal-city'], ['NL', 'postal-city'], ['BE', 'postal-city'], ['LU', 'postal-city'], ['DK', 'postal-city'], ['SE', 'postal-city'],
      ['NO', 'postal-city'], ['FI', 'postal-city'], ['PL', 'postal-city'], ['CZ', 'postal-city'],
      ['US', 'city-region-postal'], ['CA', 'city-region-postal'], ['AU', 'city-region-postal'],
      ['GB', 'city-postal-line'], ['IE', 'city-postal-line'],
      // Any other country, and a row whose country cannot be read: the default.
      ['BR', 'city-region-postal'], ['IN', 'city-region-postal'], [undefined, 'city-region-postal'],
    ];
    for (const [code, order] of orders) expect(addressOrderOf(code), code).toBe(order);
    const parts = { street: '{S}', city: 'C', region: 'R', postal: 'P' };
    expect(ADDRESS_ORDERS.map((order) => orderedAddress(parts, order))).toEqual(['{S}, {C}, {R} {P}', '{S}, {P} {C}, {R}', '{S}, {C}, {R}, {P}']);
    const { region: _, ...noRegion } = parts;
    expect(ADDRESS_ORDERS.map((order) => orderedAddress(noRegion, order))).toEqual(['{S}, {C}, {P}', '{S}, {P} {C}', '{S}, {C}, {P}']);
  });
});
