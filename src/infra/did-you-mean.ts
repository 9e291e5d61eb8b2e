/** "did you mean …?" for a mistyped value or key: the one close candidate, if there is one. */

type Rows = [Int32Array, Int32Array, Int32Array];
let rows: Rows = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/**
 * Edit distance between `a` and `b` (insert, delete, substitute, swap two adjacent
 * characters: the optimal-string-alignment Damerau-Levenshtein), or `max + 1` once it must
 * exceed `max`. Three rolling rows; stops early when a whole row is over the bound.
 */
export function editDistance(a: string, b: string, max = Math.max(a.length, b.length)): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (rows[0].length <= b.length) rows = [0, 1, 2].map(() => new Int32Array(b.length * 2 + 2)) as Rows;
  // Reused rows: this runs for hundreds of candidates per rejected value.
  let [before, previous, current] = rows;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const bj = b.charCodeAt(j - 1);
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (ai === bj ? 0 : 1));
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) {
        value = Math.min(value, before[j - 2]! + 1);
      }
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length]!, max + 1);
}

/** The closest candidate within a third of the word's length (at least 1, case ignored). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  const limit = Math.max(1, Math.floor(typed.length / 3));
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const score = editDistance(typed, candidate.toLowerCase());
    if (score <= limit && (best === undefined || score < best.score)) best = { candidate, score };
  }
  return best?.candidate;
}

/** ` (did you mean X?)`, or nothing. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closest(word, candidates);
  return match === undefined ? '' : ` (did you mean ${match}?)`;
}
