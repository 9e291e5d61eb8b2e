import { UsageError } from '../../errors.js';
import type { SourceInfo } from './types.js';

export const CANDIDATE_DELIMITERS = [',', ';', '\t', '|'] as const;

/** Records looked at when sniffing: enough to see a pattern, few enough to stay cheap. */
const SNIFF_RECORDS = 50;

export interface ChosenDelimiter {
  delimiter: string;
  source: SourceInfo['delimiterSource'];
  /** The file starts with Excel's `sep=X` line, which is not data and must be skipped. */
  sepLine: boolean;
}

// Excel writes `sep=;` as a first line to pin the delimiter; some tools quote it.
const SEP_LINE = /^"?sep=([^\r\n"])"?[ \t]*(?:\r\n|\n|\r|$)/i;

/** The delimiter named by an Excel `sep=` first line, if the text starts with one. */
export function readSepLine(text: string): string | undefined {
  return SEP_LINE.exec(text)?.[1];
}

/** Accepts the delimiter as typed on a command line: `\t` and `tab` mean a tab. */
export function normalizeDelimiter(option: string): string {
  const named: Record<string, string> = { tab: '\t', '\\t': '\t', comma: ',', semicolon: ';', pipe: '|' };
  const delimiter = named[option.toLowerCase()] ?? option;
  if (delimiter.length !== 1 || /["\r\n]/.test(delimiter)) {
    throw new UsageError(
      `bad delimiter ${JSON.stringify(option)}: give one character such as ',' ';' '|' or 'tab'`,
      'bad_delimiter',
    );
  }
  return delimiter;
}

/**
 * The delimiter for a CSV whose decoded start is `text`: the option, else the `sep=` line,
 * else the sniffed one. `complete` says `text` is the whole file (its last line is whole).
 */
export function chooseDelimiter(
  text: string,
  option: string | undefined,
  complete: boolean,
): ChosenDelimiter {
  const sep = readSepLine(text);
  const sepLine = sep !== undefined;
  if (option !== undefined) return { delimiter: normalizeDelimiter(option), source: 'option', sepLine };
  if (sep !== undefined) return { delimiter: sep, source: 'sep-line', sepLine };
  const sniffed = sniffDelimiter(text, complete);
  return sniffed === undefined
    ? { delimiter: ',', source: 'default', sepLine }
    : { delimiter: sniffed, source: 'sniffed', sepLine };
}

/**
 * The candidate that splits the first records most consistently: its most frequent non-zero
 * count of delimiters per record (outside quotes) must repeat across the records, title rows
 * above the header included; ties go to the higher count, then to the order `, ; tab |`.
 * Undefined when no candidate occurs at all.
 */
export function sniffDelimiter(text: string, complete: boolean): string | undefined {
  let best: { delimiter: string; consistency: number; width: number } | undefined;
  for (const delimiter of CANDIDATE_DELIMITERS) {
    const counts = countPerRecord(text, delimiter, complete);
    const width = usualWidth(counts);
    if (width === 0) continue;
    const consistency = counts.filter((count) => count === width).length / counts.length;
    if (
      best === undefined ||
      consistency > best.consistency ||
      (consistency === best.consistency && width > best.width)
    ) {
      best = { delimiter, consistency, width };
    }
  }
  return best?.delimiter;
}

/** The most frequent non-zero count (the larger on a tie); 0 when every count is 0. */
function usualWidth(counts: readonly number[]): number {
  const seen = new Map<number, number>();
  let width = 0;
  for (const count of counts) {
    if (count === 0) continue;
    const times = (seen.get(count) ?? 0) + 1;
    seen.set(count, times);
    const best = seen.get(width) ?? 0;
    if (times > best || (times === best && count > width)) width = count;
  }
  return width;
}

/**
 * Delimiters per record, outside quotes, for the first records; blank lines are ignored.
 * A quote opens a quoted field only at the start of a field, as in RFC 4180.
 */
function countPerRecord(text: string, delimiter: string, complete: boolean): number[] {
  const counts: number[] = [];
  let count = 0;
  let inQuotes = false;
  let fieldStart = true;
  let content = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') i++;
        else inQuotes = false;
      }
      continue;
    }
    if (c === '"' && fieldStart) {
      inQuotes = true;
      fieldStart = false;
      content = true;
    } else if (c === delimiter) {
      count++;
      fieldStart = true;
      content = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      if (content) counts.push(count);
      if (counts.length >= SNIFF_RECORDS) return counts;
      count = 0;
      fieldStart = true;
      content = false;
    } else {
      fieldStart = false;
      content = true;
    }
  }
  // A cut last record would miscount, unless it is all there is (one huge first line).
  if (content && (complete || counts.length === 0)) counts.push(count);
  return counts;
}
