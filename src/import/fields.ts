/** The fields an input row can carry, and the header spellings that map to them, in every language read. */

export const FIELDS = [
  'name',
  'email',
  'country',
  'address',
  'currency',
  'application_date',
  'liquidity_type',
  'idempotency_key',
] as const;
export type Field = (typeof FIELDS)[number];

export const REQUIRED_FIELDS: readonly Field[] = ['name', 'email', 'country', 'address'];

/**
 * The header words of each field in the languages client lists are kept in. One table: a
 * header is matched after folding (foldHeader below: case, accents, spaces and
 * punctuation), so `E-Mail-Adresse` and `e-mail adresse` are one entry. Each list is in order
 * of preference: a "Name" column wins over a "Kundenname" one. Words that mean a field only
 * sometimes (`Firma`, `Stato`, `Datum`) are left out: they take --map.
 */
export const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl'] as const;
export type Language = (typeof LANGUAGES)[number];

/** How a message names a language. */
export const LANGUAGE_NAMES: Record<Language, string> = {
  en: 'English',
  de: 'German',
  fr: 'French',
  es: 'Spanish',
  it: 'Italian',
  pt: 'Portuguese',
  nl: 'Dutch',
};

/** Languages whose people write the day before the month (31.12.2024, 31/12/2024). */
export const DAY_FIRST: ReadonlySet<Language> = new Set(['de', 'fr', 'es', 'it', 'pt', 'nl']);

export type HeaderTable = Record<Language, Record<Field, readonly string[]>>;

export const HEADER_WORDS: HeaderTable = {
  en: {
    name: ['name', 'full name', 'client name', 'customer name', 'legal name'],
    email: ['email', 'e-mail', 'email address', 'e-mail address', 'mail'],
    // The CRM and address-book spellings after the plain ones (crm-exports.ts has their whole exports).
    country: ['country', 'country code', 'country iso', 'nation', 'country/region', 'mailing country', 'billing country', 'business country/region', 'address 1 - country'],
    address: ['address', 'street address', 'postal address', 'full address'],
    currency: ['currency', 'currency code', 'ccy'],
    application_date: ['application date', 'application_date', 'applied on', 'date applied', 'applicationdate'],
    liquidity_type: ['liquidity type', 'liquidity'],
    idempotency_key: ['idempotency key', 'idempotency_key', 'external id', 'import key'],
  },
  de: {
    name: ['name', 'vollständiger name', 'kundenname', 'name des kunden', 'firmenname'],
    email: ['e-mail', 'email', 'e-mail-adresse', 'mail', 'mailadresse'],
    country: ['land', 'staat', 'ländercode', 'landescode', 'länderkürzel'],
    address: ['anschrift', 'adresse', 'straße', 'strasse', 'postanschrift', 'postadresse', 'vollständige adresse', 'straße und hausnummer'],
    currency: ['währung', 'währungscode', 'währungskürzel'],
    application_date: ['antragsdatum', 'datum des antrags', 'beantragt am', 'antrag vom', 'antragseingang'],
    liquidity_type: ['liquiditätstyp', 'liquiditätsart', 'liquidität'],
    idempotency_key: ['idempotenzschlüssel', 'externe id', 'importschlüssel'],
  },
  fr: {
    name: ['nom', 'nom complet', 'nom du client', 'nom client', 'raison sociale'],
    email: ['courriel', 'e-mail', 'email', 'mail', 'mél', 'adresse e-mail', 'adresse électronique', 'adresse mail', 'adresse courriel', 'courrier électronique'],
    country: ['pays', 'code pays', 'code du pays'],
    address: ['adresse', 'adresse postale', 'adresse complète', 'rue'],
    currency: ['devise', 'monnaie', 'code devise', 'code de la devise'],
    application_date: ['date de demande', 'date de la demande', 'date demande', 'demandé le', 'date de candidature'],
    liquidity_type: ['type de liquidité', 'liquidité'],
    idempotency_key: ["clé d'idempotence", 'identifiant externe', 'id externe', "clé d'import"],
  },
  es: {
    name: ['nombre', 'nombre completo', 'nombre del cliente', 'nombre cliente', 'razón social'],
    email: ['correo electrónico', 'correo', 'e-mail', 'email', 'mail', 'correo-e', 'dirección de correo', 'dirección de correo electrónico'],
    country: ['país', 'código de país', 'código país'],
    address: ['dirección', 'domicilio', 'dirección postal', 'dirección completa', 'calle'],
    currency: ['moneda', 'divisa', 'código de moneda'],
    application_date: ['fecha de solicitud', 'fecha solicitud', 'fecha de la solicitud', 'solicitado el'],
    liquidity_type: ['tipo de liquidez', 'liquidez'],
    idempotency_key: ['clave de idempotencia', 'id externo', 'identificador externo', 'clave de importación'],
  },
  it: {
    name: ['nome', 'nome completo', 'nome cliente', 'nominativo', 'ragione sociale', 'denominazione'],
    email: ['e-mail', 'email', 'mail', 'posta elettronica', 'indirizzo e-mail', 'indirizzo di posta elettronica'],
    country: ['paese', 'nazione', 'codice paese'],
    address: ['indirizzo', 'indirizzo completo', 'indirizzo postale', 'via'],
    currency: ['valuta', 'divisa', 'moneta', 'codice valuta'],
    application_date: ['data richiesta', 'data di richiesta', 'data della richiesta', 'data domanda', 'data della domanda', 'richiesto il'],
    liquidity_type: ['tipo di liquidità', 'liquidità'],
    idempotency_key: ['chiave di idempotenza', 'id esterno', 'identificativo esterno'],
  },
  pt: {
    name: ['nome', 'nome completo', 'nome do cliente', 'razão social'],
    email: ['e-mail', 'email', 'mail', 'correio eletrônico', 'correio electrónico', 'endereço de e-mail', 'endereço eletrônico'],
    country: ['país', 'código do país', 'código país'],
    address: ['endereço', 'morada', 'endereço completo', 'endereço postal', 'logradouro', 'rua'],
    currency: ['moeda', 'divisa', 'código da moeda'],
    application_date: ['data do pedido', 'data de pedido', 'data da solicitação', 'data de solicitação', 'data da candidatura', 'solicitado em'],
    liquidity_type: ['tipo de liquidez', 'liquidez'],
    idempotency_key: ['chave de idempotência', 'id externo', 'identificador externo'],
  },
  nl: {
    name: ['naam', 'volledige naam', 'klantnaam', 'naam klant', 'bedrijfsnaam'],
    email: ['e-mail', 'email', 'mail', 'e-mailadres', 'mailadres'],
    country: ['land', 'landcode', 'landnaam'],
    address: ['adres', 'straat', 'postadres', 'volledig adres', 'straat en huisnummer'],
    currency: ['valuta', 'munt', 'muntsoort', 'valutacode'],
    application_date: ['aanvraagdatum', 'datum aanvraag', 'datum van aanvraag', 'aangevraagd op'],
    liquidity_type: ['liquiditeitstype', 'liquiditeit'],
    idempotency_key: ['idempotentiesleutel', 'externe id', 'importsleutel'],
  },
};

/** One reading of a folded header: the field, the language, and its place in that list (0 = preferred). */
export interface HeaderReading {
  field: Field;
  language: Language;
  rank: number;
}

/** folded header → its readings, built once per table. */
export type HeaderIndex = ReadonlyMap<string, readonly HeaderReading[]>;

const indexes = new WeakMap<HeaderTable, HeaderIndex>();

/** The table by folded word (`fold` is fields.ts foldHeader, passed in to keep this file a table). */
export function indexHeaders(table: HeaderTable, fold: (header: string) => string): HeaderIndex {
  const known = indexes.get(table);
  if (known !== undefined) return known;
  const index = new Map<string, HeaderReading[]>();
  for (const language of LANGUAGES) {
    for (const [field, words] of Object.entries(table[language]) as [Field, readonly string[]][]) {
      words.forEach((word, rank) => {
        const key = fold(word);
        const readings = index.get(key) ?? [];
        if (!readings.some((r) => r.field === field && r.language === language)) readings.push({ field, language, rank });
        index.set(key, readings);
      });
    }
  }
  indexes.set(table, index);
  return index;
}

/**
 * Headers are compared after folding case, accents, spaces and punctuation
 * ("E-mail", "EMAIL ", "e_mail" → "email"). Beyond the field name itself, these are the
 * English spellings CRMs and spreadsheets commonly use; the other languages' are beside them
 * in HEADER_WORDS below; anything else takes --map field=Header.
 */
export const ALIASES: Record<Field, readonly string[]> = HEADER_WORDS.en;

/** A field's header words in every language, English first. */
export function headerWords(field: Field): string[] {
  return LANGUAGES.flatMap((language) => HEADER_WORDS[language][field]);
}

/** Folds a header for matching: lower case, no accents, no spaces or punctuation, NBSP as space. */
export function foldHeader(header: string): string {
  return header
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}
