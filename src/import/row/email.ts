/**
 * E-mail addresses as mail systems carry them: an internationalized domain in its ASCII
 * (punycode) form. The row check sends that form; identity compares in it.
 */
import { domainToASCII } from 'node:url';

const ASCII = /^[\x21-\x7e]*$/;

/** Printable ASCII without spaces: nothing to convert. */
export const isAscii = (text: string) => ASCII.test(text);

/**
 * The e-mail with an internationalized domain in its ASCII form (`jörg@bücher.de` →
 * `jörg@xn--bcher-kva.de`); anything else as it is.
 */
export function asciiDomain(email: string): string {
  if (ASCII.test(email)) return email;
  const at = email.lastIndexOf('@');
  if (at < 0) return email;
  const domain = email.slice(at + 1);
  // domainToASCII answers '' for a name it cannot encode: then the domain stays as it is.
  const ascii = domainToASCII(domain.normalize('NFC'));
  return ascii === '' ? email : `${email.slice(0, at)}@${ascii}`;
}
