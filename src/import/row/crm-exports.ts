/**
 * The header sets of the exports client lists are migrated from, one row per export kind: the
 * columns that give it away, and which feed each field. Each part is a template as --map takes
 * it; a part whose column the file lacks drops out (an export may leave out Middle Name). The
 * address is put together in the order of each row's country (address-order.ts). Header names
 * are as each product writes them in its export; the source of each set is noted.
 */

/** One export kind. Headers are compared folded (case, spaces and punctuation), as all headers are. */
export interface ExportKind {
  /** As the plan names it: `a Salesforce contacts report`. */
  label: string;
  /** Headers that together give the export away: every one must be in the file. */
  signature: readonly string[];
  /** A person's name from its parts, or a company's from its one column. */
  name: string;
  /** The e-mail column, where no header word finds it. */
  email?: string;
  /** The street lines, as a template: their separators are kept in every order. */
  street: string;
  city: string;
  region?: string;
  postal: string;
  country: string;
  /**
   * Header prefixes of the export's other addresses (`Home `, `Address 2 - `): their city and
   * postal-code columns are another address, not parts left out of this one.
   */
  otherAddresses?: readonly string[];
  /**
   * Header prefixes of columns the export always writes that are no field of the service
   * (record dates, checksums, a person's birthday): dropped, listed as ignored, never taken for
   * an application date.
   */
  bookkeeping?: readonly string[];
}

export const EXPORT_KINDS: readonly ExportKind[] = [
  // Salesforce report columns are the standard fields' labels (Contact: Mailing Address; Lead:
  // Address; Account: Billing Address), as a report's "Export → Details only" writes them.
  {
    label: 'a Salesforce contacts report',
    signature: ['Mailing Street', 'Mailing Zip/Postal Code'],
    name: '{First Name} {Middle Name} {Last Name}',
    email: 'Email',
    street: '{Mailing Street}',
    city: 'Mailing City',
    region: 'Mailing State/Province',
    postal: 'Mailing Zip/Postal Code',
    country: 'Mailing Country',
    otherAddresses: ['Other '],
    bookkeeping: ['Birthdate'],
  },
  {
    label: 'a Salesforce leads report',
    signature: ['Company / Account', 'Zip/Postal Code'],
    name: '{First Name} {Middle Name} {Last Name}',
    email: 'Email',
    street: '{Street}',
    city: 'City',
    region: 'State/Province',
    postal: 'Zip/Postal Code',
    country: 'Country',
  },
  {
    label: 'a Salesforce accounts report',
    signature: ['Account Name', 'Billing Street', 'Billing Zip/Postal Code'],
    name: '{Account Name}',
    email: 'Email',
    street: '{Billing Street}',
    city: 'Billing City',
    region: 'Billing State/Province',
    postal: 'Billing Zip/Postal Code',
    country: 'Billing Country',
    otherAddresses: ['Shipping '],
  },
  // HubSpot: "Export" from the contacts and companies index pages, the default properties'
  // labels (HubSpot's default contact and company properties).
  {
    label: 'a HubSpot contacts export',
    signature: ['First Name', 'Street Address', 'State/Region', 'Country/Region'],
    name: '{First Name} {Last Name}',
    email: 'Email',
    street: '{Street Address}',
    city: 'City',
    region: 'State/Region',
    postal: 'Postal Code',
    country: 'Country/Region',
    bookkeeping: ['Create Date', 'Last Activity Date', 'Last Modified Date'],
  },
  {
    label: 'a HubSpot companies export',
    signature: ['Company name', 'Street Address', 'State/Region', 'Country/Region'],
    name: '{Company name}',
    email: 'Email',
    street: '{Street Address}',
    city: 'City',
    region: 'State/Region',
    postal: 'Postal Code',
    country: 'Country/Region',
    bookkeeping: ['Create Date', 'Last Activity Date', 'Last Modified Date'],
  },
  // Google Contacts, Export → Google CSV: numbered e-mail and address groups; "Address 1 -
  // Formatted" repeats the parts on several lines and is left out.
  {
    label: 'a Google Contacts export',
    signature: ['E-mail 1 - Value', 'Address 1 - Street', 'Address 1 - Postal Code'],
    name: '{First Name} {Middle Name} {Last Name}',
    email: 'E-mail 1 - Value',
    street: '{Address 1 - Street}, {Address 1 - Extended Address}, {Address 1 - PO Box}',
    city: 'Address 1 - City',
    region: 'Address 1 - Region',
    postal: 'Address 1 - Postal Code',
    country: 'Address 1 - Country',
    otherAddresses: ['Address 2 - ', 'Address 3 - '],
    bookkeeping: ['Birthday'],
  },
  // Outlook, File → Import/Export → Comma Separated Values: the columns Microsoft lists in
  // "Create or edit .csv files to import into Outlook"; the business address is the client's.
  {
    label: 'an Outlook contacts export',
    signature: ['Business Street', 'Business Postal Code', 'E-mail Address'],
    name: '{First Name} {Middle Name} {Last Name}',
    email: 'E-mail Address',
    street: '{Business Street}, {Business Street 2}, {Business Street 3}',
    city: 'Business City',
    region: 'Business State',
    postal: 'Business Postal Code',
    country: 'Business Country/Region',
    otherAddresses: ['Home ', 'Other '],
    bookkeeping: ['Birthday', 'Anniversary'],
  },
  // The same export from a German Outlook: its own column names.
  {
    label: 'an Outlook contacts export (German)',
    signature: ['Straße geschäftlich', 'Postleitzahl geschäftlich', 'E-Mail-Adresse'],
    name: '{Vorname} {Weitere Vornamen} {Nachname}',
    email: 'E-Mail-Adresse',
    street: '{Straße geschäftlich}, {Straße geschäftlich 2}, {Straße geschäftlich 3}',
    city: 'Ort geschäftlich',
    region: 'Region geschäftlich',
    postal: 'Postleitzahl geschäftlich',
    country: 'Land/Region geschäftlich',
    otherAddresses: ['Straße privat', 'Ort privat', 'Postleitzahl privat', 'Weitere ', 'Weiterer ', 'Weiteres'],
    bookkeeping: ['Geburtstag', 'Jahrestag'],
  },
  // Pipedrive, "Export data" of People and Organizations: "<Item> - <Field>", an address
  // field's parts "<Part> of <Field>" (people's address field: Postal address).
  {
    label: 'a Pipedrive people export',
    signature: ['Person - Name', 'Person - ZIP/Postal code of Postal address'],
    name: '{Person - Name}',
    email: 'Person - Email - Work',
    street: '{Person - Street/road name of Postal address} {Person - House number of Postal address}, {Person - Apartment/suite no of Postal address}',
    city: 'Person - City/town/village/locality of Postal address',
    region: 'Person - State/county of Postal address',
    postal: 'Person - ZIP/Postal code of Postal address',
    country: 'Person - Country of Postal address',
  },
  {
    label: 'a Pipedrive organizations export',
    signature: ['Organization - Name', 'Organization - ZIP/Postal code of Address'],
    name: '{Organization - Name}',
    email: 'Organization - Email',
    street: '{Organization - Street/road name of Address} {Organization - House number of Address}, {Organization - Apartment/suite no of Address}',
    city: 'Organization - City/town/village/locality of Address',
    region: 'Organization - State/county of Address',
    postal: 'Organization - ZIP/Postal code of Address',
    country: 'Organization - Country of Address',
  },
  // Zoho CRM, Setup → Data Administration → Export: the modules' field labels.
  {
    label: 'a Zoho CRM contacts export',
    signature: ['Mailing Street', 'Mailing Zip', 'Contact Owner'],
    name: '{First Name} {Last Name}',
    email: 'Email',
    street: '{Mailing Street}',
    city: 'Mailing City',
    region: 'Mailing State',
    postal: 'Mailing Zip',
    country: 'Mailing Country',
    otherAddresses: ['Other '],
    bookkeeping: ['Date of Birth'],
  },
  {
    label: 'a Zoho CRM leads export',
    signature: ['Lead Owner', 'Zip Code'],
    name: '{First Name} {Last Name}',
    email: 'Email',
    street: '{Street}',
    city: 'City',
    region: 'State',
    postal: 'Zip Code',
    country: 'Country',
    bookkeeping: ['Date of Birth'],
  },
  // Microsoft Dynamics 365, "Export to Excel" of a contacts or accounts view: the columns'
  // display names (Address 1 is the primary address).
  {
    label: 'a Dynamics 365 contacts export',
    signature: ['Full Name', 'Address 1: Street 1', 'Address 1: ZIP/Postal Code'],
    name: '{Full Name}',
    email: 'Email',
    street: '{Address 1: Street 1}, {Address 1: Street 2}, {Address 1: Street 3}',
    city: 'Address 1: City',
    region: 'Address 1: State/Province',
    postal: 'Address 1: ZIP/Postal Code',
    country: 'Address 1: Country/Region',
    otherAddresses: ['Address 2: ', 'Address 3: '],
    bookkeeping: ['(Do Not Modify)', 'Created On', 'Modified On', 'Birthday'],
  },
  {
    label: 'a Dynamics 365 accounts export',
    signature: ['Account Name', 'Address 1: Street 1', 'Address 1: ZIP/Postal Code'],
    name: '{Account Name}',
    email: 'Email',
    street: '{Address 1: Street 1}, {Address 1: Street 2}, {Address 1: Street 3}',
    city: 'Address 1: City',
    region: 'Address 1: State/Province',
    postal: 'Address 1: ZIP/Postal Code',
    country: 'Address 1: Country/Region',
    otherAddresses: ['Address 2: ', 'Address 3: '],
    bookkeeping: ['(Do Not Modify)', 'Created On', 'Modified On'],
  },
];
