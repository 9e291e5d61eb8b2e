/**
 * XML's character references: the five predefined entities and numeric references, each only
 * with its `;`; anything else is left as written, as the reader always has (htmlparser2's
 * strict mode, which it used before). One difference from it: `&#128;`–`&#159;` are those code
 * points, not HTML's Windows-1252 reading of them (`&#128;` was `€`).
 */

/** `raw` (text or an attribute's value, no markup in it) with its references replaced. */
export function decodeEntities(raw: string): string {
  let decoded = '';
  let from = 0;
  let amp = raw.indexOf('&');
  while (amp !== -1) {
    const semicolon = raw.indexOf(';', amp + 1);
    if (semicolon === -1) break;
    const char = reference(raw, amp + 1, semicolon);
    if (char === undefined) {
      amp = raw.indexOf('&', amp + 1);
    } else {
      decoded += raw.slice(from, amp) + char;
      from = semicolon + 1;
      amp = raw.indexOf('&', from);
    }
  }
  return from === 0 ? raw : decoded + raw.slice(from);
}

/**
 * Where `text` ends in what may be the start of a reference (its last `&`, then only name
 * characters and `#`), or -1: a reader holds that back until the next chunk tells.
 */
export function unfinishedReference(text: string): number {
  const amp = text.lastIndexOf('&');
  if (amp === -1) return -1;
  for (let i = amp + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const nameChar = (code >= 0x30 && code <= 0x39) || ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a) || code === 0x23;
    if (!nameChar) return -1;
  }
  return amp;
}

/** The character `raw[start, end)` (between `&` and `;`) stands for, or undefined. */
function reference(raw: string, start: number, end: number): string | undefined {
  if (raw.charCodeAt(start) !== 0x23) {
    switch (raw.slice(start, end)) {
      case 'amp':
        return '&';
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
      default:
        return undefined;
    }
  }
  const hex = (raw.charCodeAt(start + 1) | 0x20) === 0x78;
  const first = hex ? start + 2 : start + 1;
  if (first === end) return undefined;
  let codePoint = 0;
  for (let i = first; i < end; i++) {
    const digit = digitValue(raw.charCodeAt(i), hex);
    if (digit === -1) return undefined;
    codePoint = codePoint * (hex ? 16 : 10) + digit;
  }
  return String.fromCodePoint(replaceCodePoint(codePoint));
}

function digitValue(code: number, hex: boolean): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return hex && lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * What a numeric reference decodes to: the code point, as XML (and every spreadsheet program)
 * reads it; U+FFFD for NUL, surrogates and past U+10FFFF, which XML does not allow.
 */
function replaceCodePoint(codePoint: number): number {
  return codePoint === 0 || (codePoint >= 0xd800 && codePoint <= 0xdfff) || codePoint > 0x10ffff ? 0xfffd : codePoint;
}
