/**
 * Fields built from several columns: `--map 'name={First Name} {Last Name}'` in the CLI, the
 * config file, a mapping file and the library. Empty parts drop with their separators, white
 * space is normalized; a row whose parts are all empty is invalid for that field; a bad
 * template is a usage error before the file is read, an unknown column one before any row.
 * No partial address quietly: city and postal-code columns left out of the address stop an
 * import (validate warns), naming them and the --map that takes them in. The resolved mapping
 * is kept (--save-mapping) and reused (--mapping, the config); the plan, --json and the
 * review page show each composite with its parts and first results.
 */
import { existsSync } from 'node:fs';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { importClients, type ImportPlan } from '../src/import/run-import.js';
import { type Composite, composeValue, formatTemplate, parseTemplate } from '../src/import/row/composite.js';
import { isAddressPart } from '../src/import/row/address-parts.js';
import { readResults, ROOT, runCliInProcess as runCli, useSandbox } from './helpers.js';

const ctx = useSandbox();
let files = 0;

async function csv(rows: string[][], name = `in-${++files}.csv`): Promise<string> {
  const path = join(ctx.dir, name);
  await writeFile(path, stringify(rows));
  return path;
}

/** A template resolved against columns 0, 1, 2… in the order of its parts. */
function composite(text: string): Composite {
  const template = parseTemplate('name', text);
  return { ...template, template: text, parts: template.parts.map((part, column) => ({ ...part, column })) };
}

const PEOPLE = ['Vorname', 'Nachname', 'Mail', 'Land', 'Strasse', 'PLZ', 'Ort'];
const NAME = '--map';

/** Each test its own people: the sandbox is shared by the file. */
function people(tag: string): string[][] {
  return [
    PEOPLE,
    ['Ana', 'Souza', `ana.${tag}@example.com`, 'PT', 'Rua Augusta 10', '1100-053', 'Lisboa'],
    ['  Bo ', 'Li', `bo.${tag}@example.com`, 'DE', 'Hauptstr. 1', '', 'Berlin'],
    ['Claire', '', `claire.${tag}@example.com`, 'FR', '', '69001', 'Lyon'],
  ];
}
const MAPS = [NAME, 'name={Vorname} {Nachname}', NAME, 'email=Mail', NAME, 'address={Strasse}, {PLZ} {Ort}'];

describe('composing a value', () => {
  it('drops empty parts with their separators, normalizes white space, keeps the separator after the part before', () => {
    const address = composite('{Street}, {Postal code} {City}');
    expect(composeValue(address, ['Rua Augusta 10', '1100-053', 'Lisboa'])).toBe('Rua Augusta 10, 1100-053 Lisboa');
    expect(composeValue(address, ['Rua Augusta 10', '', 'Lisboa'])).toBe('Rua Augusta 10, Lisboa');
    expect(composeValue(address, ['', '1100-053', 'Lisboa'])).toBe('1100-053 Lisboa');
    expect(composeValue(address, ['Rua  Augusta\n10 ', ' \t', 'Lisboa'])).toBe('Rua Augusta 10, Lisboa');
    // Spaces only count as empty: all parts empty is an empty field.
    expect(composeValue(address, ['  ', '', '\u00a0'])).toBe('');
    expect(composeValue(composite('{Last}, {First}'), ['', 'Ana'])).toBe('Ana');
    // A spreadsheet's formula escape is undone per part, as for a single cell.
    expect(composeValue(composite('{A} {B}'), ["'=Ana", 'Souza'])).toBe('=Ana Souza');
  });

  it('parses braces, doubled braces as literal ones, and writes the template back as it was', () => {
    expect(parseTemplate('name', '{A}-{B}')).toEqual({ lead: '', parts: [{ header: 'A', after: '-' }, { header: 'B', after: '' }] });
    expect(parseTemplate('name', '{Amount {{EUR}}}').parts[0]!.header).toBe('Amount {EUR}');
    for (const text of ['{First Name} {Last Name}', '({Code}) {Name}', '{Amount {{EUR}}}']) expect(formatTemplate(parseTemplate('name', text))).toBe(text);
  });

  it('refuses unbalanced and empty braces with a usage error naming the place', () => {
    expect(() => parseTemplate('name', '{First Name {Last Name}')).toThrow(/the "\{" at character 1 is not closed before the next "\{"/);
    expect(() => parseTemplate('name', '{First Name')).toThrow(/the "\{" at character 1 is not closed/);
    expect(() => parseTemplate('name', 'First}')).toThrow(/a "\}" at character 6 closes no "\{"/);
    expect(() => parseTemplate('name', '{} {Last}')).toThrow(/names no column/);
    expect(() => parseTemplate('name', '{First')).toThrow(UsageError);
  });

  it('knows city and postal-code headers wherever the word stands, and not inside another word', () => {
    for (const header of ['City', 'Mailing City', 'MailingCity', 'Ort geschäftlich', 'Address 1 - Postal Code', 'Zip/Postal Code', 'PLZ', 'Code postal', 'Woonplaats', 'CAP']) {
      expect(isAddressPart(header), header).toBe(true);
    }
    for (const header of ['Ethnicity', 'Capacity', 'Report', 'Street', 'Country', 'Sport']) expect(isAddressPart(header), header).toBe(false);
  });
});

describe('--map templates on the command line', () => {
  it('imports composed names and addresses; the plan shows parts and three results', async () => {
    const file = await csv(people('cli'));
    const run = await runCli(['import', file, ...MAPS], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    // A template of one's own is shown as written, separators and all.
    expect(run.stderr).toContain('columns: name ← {Vorname} {Nachname}, email ← "Mail", address ← {Strasse}, {PLZ} {Ort}, country ← "Land" (German)');
    expect(run.stderr).toContain('  name: "Ana Souza" ← "Ana" + "Souza"; "Bo Li" ← "Bo" + "Li"; "Claire" ← "Claire" + ""');
    expect(run.stderr).toContain('  address: "Rua Augusta 10, 1100-053 Lisboa" ← "Rua Augusta 10" + "1100-053" + "Lisboa"');
    const byEmail = new Map(ctx.sandbox.store.all().map((client) => [client.email, client]));
    expect(byEmail.get('ana.cli@example.com')).toMatchObject({ name: 'Ana Souza', address: 'Rua Augusta 10, 1100-053 Lisboa' });
    expect(byEmail.get('bo.cli@example.com')).toMatchObject({ name: 'Bo Li', address: 'Hauptstr. 1, Berlin' });
    expect(byEmail.get('claire.cli@example.com')).toMatchObject({ name: 'Claire', address: '69001 Lyon' });
  });

  it('a row whose parts are all empty (spaces count) is invalid for that field, as an empty cell is', async () => {
    const rows = people('empty');
    rows.push(['  ', '', 'nobody.empty@example.com', 'PT', 'Rua 1', '1000-001', 'Lisboa']);
    const file = await csv(rows);
    const before = ctx.sandbox.store.size;
    const run = await runCli(['import', file, ...MAPS], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(1);
    expect(ctx.sandbox.store.size - before).toBe(3);
    expect(run.stderr).toContain('required, but empty');
    // The results file: row, outcome, …, error_message, …, the row's own cells.
    const results = await readResults(`${file}.results.csv`);
    const last = results.find((row) => row.includes('nobody.empty@example.com'))!;
    expect(last[1]).toBe('invalid');
    expect(last[9]).toBe('name: required, but empty');
  });

  it('an unbalanced template is a usage error before the file is opened', async () => {
    const missing = join(ctx.dir, 'not-there.csv');
    const run = await runCli(['validate', missing, NAME, 'name={Vorname} {Nachname'], { env: ctx.env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--map name={Vorname} {Nachname: the "{" at character 11 is not closed');
    expect(run.stderr).toContain('[bad_option]');
    expect(run.stderr).not.toContain('not-there.csv');
  });

  it('a template naming a column the file lacks stops before any row, naming it', async () => {
    const file = await csv(people('unknown'));
    const [clients, requests] = [ctx.sandbox.store.size, ctx.sandbox.stats.requests];
    const run = await runCli(['import', file, NAME, 'name={Vorname} {Familienname}', NAME, 'email=Mail', NAME, 'address={Strasse}, {PLZ} {Ort}'], { env: ctx.env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--map name={Vorname} {Familienname}: no column "Familienname"; headers found: "Vorname", "Nachname"');
    expect(run.stderr).toContain('[map_unknown_header]');
    expect([ctx.sandbox.store.size, ctx.sandbox.stats.requests]).toEqual([clients, requests]);
    expect(existsSync(`${file}.results.csv`)).toBe(false);
  });

  it('a column name with a typo: the refusal says which header was meant', async () => {
    const file = await csv(people('typo'));
    const run = await runCli(['validate', file, NAME, 'name={Vorname} {Nachnme}', NAME, 'email=Mail', NAME, 'address={Strasse}, {PLZ} {Ort}']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--map name={Vorname} {Nachnme}: no column "Nachnme" (did you mean "Nachname"?); headers found: "Vorname", "Nachname"');
    expect(run.stderr).toContain('[map_unknown_header]');
  });
});

describe('a one-part template', () => {
  it("Google's multi-line `Address 1 - Formatted` as the address: one line, the parts it repeats dropped on purpose", async () => {
    const file = join(ctx.dir, 'google-formatted.csv');
    await copyFile(join(ROOT, 'fixtures', 'input', 'crm', 'google-contacts.csv'), file);
    const drop = ['--ignore-column', 'Address 1 - City', '--ignore-column', 'Address 1 - Postal Code'];
    const refused = await runCli(['import', file, NAME, 'address={Address 1 - Formatted}'], { env: ctx.env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('the address is "Address 1 - Formatted" only, but columns "Address 1 - City", "Address 1 - Postal Code" hold part of an address too');
    const run = await runCli(['import', file, NAME, 'address={Address 1 - Formatted}', ...drop], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('  address: "Via Roma 1 Milano MI 20121 Italy" ← "Via Roma 1\\nMilano MI 20121\\nItaly"');
    const client = ctx.sandbox.store.all().find((c) => c.email === 'nina.rossi@google-contacts.example');
    expect(client).toMatchObject({ name: 'Nina Maria Rossi', address: 'Via Roma 1 Milano MI 20121 Italy' });
  });
});

describe('no partial address, quietly', () => {
  const HUBSPOT_LIKE = (tag: string) => [
    ['Name', 'Email', 'Country', 'Street Address', 'City', 'Postal Code'],
    ['Ana Souza', `ana.${tag}@example.com`, 'PT', 'Rua Augusta 10', 'Lisboa', '1100-053'],
  ];

  it('import stops before sending, naming the columns and the --map that takes them in', async () => {
    const file = await csv(HUBSPOT_LIKE('partial'));
    const [clients, requests] = [ctx.sandbox.store.size, ctx.sandbox.stats.requests];
    const run = await runCli(['import', file], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('the address is "Street Address" only, but columns "City", "Postal Code" hold part of an address too; nothing was sent');
    expect(run.stderr).toContain("To send them: --map 'address={Street Address}, {City} {Postal Code}'");
    expect(run.stderr).toContain("to drop them on purpose: --ignore-column City --ignore-column 'Postal Code'");
    expect(run.stderr).toContain('[unmapped_field_column]');
    expect([ctx.sandbox.store.size, ctx.sandbox.stats.requests]).toEqual([clients, requests]);
    // A refused run leaves none of its files: no results, no sidecar, no trail.
    for (const left of ['.results.csv', '.results.csv.meta.json', '.results.csv.trail.csv']) expect(existsSync(`${file}${left}`), left).toBe(false);
  });

  it('validate warns and keeps its exit code; the suggested --map sends the whole address; --ignore-column drops them', async () => {
    const file = await csv(HUBSPOT_LIKE('partial-ok'));
    const checked = await runCli(['validate', file]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stderr).toContain('warning: the address is "Street Address" only, but "City", "Postal Code" hold part of an address too; import stops here');
    const sent = await runCli(['import', file, NAME, 'address={Street Address}, {City} {Postal Code}', '--overwrite'], { env: ctx.env() });
    expect(sent.code, sent.stderr).toBe(0);
    expect(ctx.sandbox.store.all().find((client) => client.email === 'ana.partial-ok@example.com')?.address).toBe('Rua Augusta 10, Lisboa 1100-053');
    const other = await csv(HUBSPOT_LIKE('partial-drop'));
    const dropped = await runCli(['import', other, '--ignore-column', 'City', '--ignore-column', 'Postal Code'], { env: ctx.env() });
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(ctx.sandbox.store.all().find((client) => client.email === 'ana.partial-drop@example.com')?.address).toBe('Rua Augusta 10');
  });
});

describe('a mapping to keep', () => {
  it('validate --save-mapping writes the resolved mapping; --mapping reuses it, --map goes over it', async () => {
    const first = await csv(people('saved-a'));
    const mapping = join(ctx.dir, 'team-mapping.json');
    const saved = await runCli(['validate', first, ...MAPS, '--save-mapping', mapping]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stderr).toContain(`mapping: written to ${mapping}`);
    expect(JSON.parse(await readFile(mapping, 'utf8'))).toEqual({
      map: { name: '{Vorname} {Nachname}', email: 'Mail', country: 'Land', address: '{Strasse}, {PLZ} {Ort}' },
    });
    const second = await csv(people('saved-b'));
    const run = await runCli(['import', second, '--mapping', mapping, NAME, 'name={Nachname}, {Vorname}'], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    const byEmail = new Map(ctx.sandbox.store.all().map((client) => [client.email, client]));
    expect(byEmail.get('ana.saved-b@example.com')).toMatchObject({ name: 'Souza, Ana', address: 'Rua Augusta 10, 1100-053 Lisboa' });
  });

  it('the config file reuses it too: import.mapping, or the same map pasted into import.map', async () => {
    const mapping = join(ctx.dir, 'config-mapping.json');
    await writeFile(mapping, JSON.stringify({ map: { name: '{Vorname} {Nachname}', email: 'Mail', address: '{Strasse}, {PLZ} {Ort}' } }));
    const config = join(ctx.dir, 'ccs-bulk.config.json');
    await writeFile(config, JSON.stringify({ import: { mapping } }));
    const viaFile = await csv(people('config-file'));
    const run = await runCli(['import', viaFile, '--config', config], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    await writeFile(config, JSON.stringify({ import: { map: { name: '{Vorname} {Nachname}', email: 'Mail', address: '{Strasse}, {PLZ} {Ort}' } } }));
    const viaMap = await csv(people('config-map'));
    const mapped = await runCli(['import', viaMap, '--config', config], { env: ctx.env() });
    expect(mapped.code, mapped.stderr).toBe(0);
    const names = ctx.sandbox.store.all().filter((client) => client.email.startsWith('ana.config')).map((client) => client.name);
    expect(names).toEqual(['Ana Souza', 'Ana Souza']);
  });

  it('a file that is not a mapping is a usage error naming it', async () => {
    const file = await csv(people('bad-mapping'));
    const mapping = join(ctx.dir, 'bad-mapping.json');
    await writeFile(mapping, JSON.stringify({ map: { nom: 'Name' } }));
    const run = await runCli(['validate', file, '--mapping', mapping]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--mapping ${mapping}: not a mapping file at map: Unrecognized key: "nom"`);
    await writeFile(mapping, JSON.stringify({ map: { name: '{Vorname' } }));
    const braces = await runCli(['validate', file, '--mapping', mapping]);
    expect(braces.stderr).toContain('is not closed');
  });
});

describe('shown before sent', () => {
  it('--json lists each composite with its parts and first results; the review page shows them', async () => {
    const file = await csv(people('json'));
    const report = join(ctx.dir, 'json-report.html');
    const run = await runCli(['validate', file, ...MAPS, '--json', '--report', report]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { composites: Record<string, { template: string; parts: string[]; samples: { value: string; parts: string[] }[] }> };
    expect(summary.composites.name).toEqual({
      template: '{Vorname} {Nachname}',
      parts: ['Vorname', 'Nachname'],
      described: '"Vorname" + "Nachname"',
      samples: [
        { value: 'Ana Souza', parts: ['Ana', 'Souza'] },
        { value: 'Bo Li', parts: ['Bo', 'Li'] },
        { value: 'Claire', parts: ['Claire', ''] },
      ],
    });
    const html = await readFile(report, 'utf8');
    expect(html).toContain('<section id="composites">');
    expect(html).toContain('<bdi>Ana Souza</bdi> ← <bdi>Ana</bdi> + <bdi>Souza</bdi>');
  });

  it('the library takes templates in `map`, gives them to onPlan, and rejects bad braces before reading', async () => {
    const file = await csv(people('library'));
    let plan: ImportPlan | undefined;
    const summary = await importClients({
      file,
      dryRun: true,
      results: `${file}.results.csv`,
      map: { name: '{Vorname} {Nachname}', email: 'Mail', address: '{Strasse}, {PLZ} {Ort}' },
      onPlan: (settled) => (plan = settled),
    });
    expect(summary.counts.valid).toBe(3);
    expect(plan?.composites?.address?.samples[1]).toEqual({ value: 'Hauptstr. 1, Berlin', parts: ['Hauptstr. 1', '', 'Berlin'] });
    const refused = await importClients({ file: join(ctx.dir, 'absent.csv'), dryRun: true, map: { name: '{Vorname' } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as UsageError).code).toBe('bad_option');
  });
});
