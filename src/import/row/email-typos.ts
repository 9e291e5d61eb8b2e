/**
 * Mistyped e-mail domains: `gmial.com`, `hotmial.com`, `yahooo.com`, `example.con`. Such an
 * address is well-formed, so only this check catches it, and a client created with it is
 * unreachable. Deliberately narrow, since it makes a row invalid: a top-level domain that does
 * not exist but is one slip from `.com`/`.net`/`.org`, or a provider name one or two edits from
 * a big mail provider's that is not itself a real provider (`ymail`, `email`, `mail` are).
 */
import { editDistance } from './suggest.js';
import { memoize } from './normalize.js';

/** Not delegated top-level domains, each a slip of the one it maps to. */
const TLD_TYPOS = new Map<string, string>([
  ...['con', 'cmo', 'ocm', 'vom', 'xom', 'cpm', 'cim', 'comm', 'coom', 'c0m'].map((t) => [t, 'com'] as const),
  ...['nte', 'ent', 'nett'].map((t) => [t, 'net'] as const),
  ...['ogr', 'rog', 'orgg'].map((t) => [t, 'org'] as const),
]);

/** The providers whose names get mistyped, by the label before the top-level domain. */
const PROVIDERS = ['gmail', 'googlemail', 'hotmail', 'outlook', 'yahoo', 'icloud', 'protonmail'];

/** Real providers near one of PROVIDERS: never "corrected". */
const REAL = new Set([...PROVIDERS, 'ymail', 'email', 'mail', 'gmx', 'rocketmail', 'hotmail', 'proton', 'yandex', 'cloud']);

/** `gmial.com` → `gmail.com`; undefined when the domain looks right. The domain arrives lower-cased. */
export const suggestDomain = memoize((domain) => {
  const dot = domain.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const tld = domain.slice(dot + 1);
  const fixedTld = TLD_TYPOS.get(tld) ?? tld;
  const first = domain.indexOf('.');
  const label = domain.slice(0, first);
  const rest = domain.slice(first, dot + 1);
  const fixedLabel = REAL.has(label) || label.length < 5 ? label : nearestProvider(label);
  const fixed = `${fixedLabel}${rest}${fixedTld}`;
  return fixed === domain ? undefined : fixed;
});

function nearestProvider(label: string): string {
  // One slip in a short name, two in a long one: `gmial`, `hotmial`, `gooogelmail`.
  const max = label.length <= 6 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = max + 1;
  let tied = false;
  for (const provider of PROVIDERS) {
    const distance = editDistance(label, provider, max);
    if (distance < bestDistance) [best, bestDistance, tied] = [provider, distance, false];
    else if (distance === bestDistance && distance <= max) tied = true;
  }
  return best === undefined || tied ? label : best;
}

/** The issue for a well-formed address with a mistyped domain, or undefined. */
export function emailTypo(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at < 0) return undefined;
  const fixed = suggestDomain(email.slice(at + 1).toLowerCase());
  return fixed === undefined
    ? undefined
    : `mistyped domain ${JSON.stringify(email.slice(at + 1))} (did you mean ${email.slice(0, at + 1)}${fixed}?)`;
}
