/**
 * The sheet to read among `names` (tab order, hidden sheets included): by exact name, then by
 * name ignoring case and surrounding spaces, then by 1-based number; the first sheet by default.
 */
export function targetSheet(selector: string | undefined, names: readonly string[]): string | undefined {
  if (selector === undefined) return names[0];
  if (names.includes(selector)) return selector;
  const loose = (name: string) => name.trim().toLowerCase();
  const byName = names.find((name) => loose(name) === loose(selector));
  if (byName !== undefined) return byName;
  return /^\d+$/.test(selector.trim()) ? names[Number(selector) - 1] : undefined;
}
