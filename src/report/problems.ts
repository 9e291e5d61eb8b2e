/**
 * A row check's issue (`country: unknown country "Germny" (did you mean Germany (DE)?)`) as the
 * review page groups it: a problem code, the column at fault, the suggestion and the fix. The
 * codes name the kind of problem, so a thousand different misspelt countries are one group.
 */
import { FIELDS, type Field } from '../import/fields.js';
import { fixFor } from '../import/fix-it/fix-it-parts.js';

export interface Problem {
  /** `country_unknown`, `email_required`, `row_width`… */
  code: string;
  /** The field at fault, when the issue is one field's. */
  field: Field | undefined;
  /** The header of a column at fault that feeds no field (invalid bytes in an ignored column). */
  header: string | undefined;
  message: string;
}

const KINDS: readonly (readonly [RegExp, string])[] = [
  [/^required, but empty/, 'required'],
  [/^longer than/, 'too_long'],
  [/^holds a control character/, 'control_character'],
  [/^holds a spreadsheet error/, 'spreadsheet_error'],
  [/not valid UTF-8/, 'invalid_bytes'],
  [/^unknown country/, 'unknown'],
  [/^not an ISO 4217/, 'unknown'],
  [/^not a real date/, 'not_a_date'],
  [/^not an e-mail address/, 'not_an_address'],
  [/^mistyped domain/, 'mistyped_domain'],
  [/^only "chain"/, 'unsupported'],
  [/^only printable ASCII/, 'not_printable_ascii'],
];

/** Issues read `field: message`; an issue about the whole row has no such prefix. */
export function classifyIssue(issue: string): Problem {
  const at = issue.indexOf(': ');
  const prefix = at > 0 ? issue.slice(0, at) : '';
  const message = at > 0 ? issue.slice(at + 2) : issue;
  const field = (FIELDS as readonly string[]).includes(prefix) ? (prefix as Field) : undefined;
  const header = field === undefined && prefix.startsWith('"') ? quotedHeader(prefix) : undefined;
  if (field === undefined && header === undefined) {
    return { code: /^row has \d+ fields?/.test(issue) ? 'row_width' : 'row_invalid', field, header, message: issue };
  }
  const kind = KINDS.find(([pattern]) => pattern.test(message))?.[1] ?? 'invalid';
  return { code: `${field ?? 'column'}_${kind}`, field, header, message };
}

function quotedHeader(prefix: string): string | undefined {
  try {
    const header: unknown = JSON.parse(prefix);
    return typeof header === 'string' ? header : undefined;
  } catch {
    return undefined;
  }
}

/** The value a message proposes (`Germany (DE)`, `EUR`, `ann@gmail.com`): never applied. */
export function suggestionIn(message: string): string | undefined {
  return /did you mean (.+?)\?\)?$/s.exec(message)?.[1];
}

/**
 * How to fix this kind of problem, in a few words (the workbook's comment text); the
 * suggestion is left out, as it is one row's, not the group's. Undefined where the message says it.
 */
export function fixOf(message: string): string | undefined {
  const general = message.replace(/ \(did you mean .+\?\)$/s, '').replace(/; did you mean .+\?\)$/s, ')');
  return fixFor(general) ?? (general === message ? undefined : 'use the suggestion if it is what was meant.');
}
