/**
 * Errors in the caller's words. The import and export name what to change as the command line
 * does (`--max-errors 50`, `add --resume`), and the commands print that as it is. A library
 * caller set options, not flags: importClients and exportClients pass every message they let out
 * (a thrown error, the summary's stop) through this one table, so it reads `maxErrors: 50`,
 * `resume: true`, `breaker.outageTimeoutMs`. One table, next to nothing else: a new flag named in
 * a message gets its row here (test/library.words.test.ts reads every row).
 */
import { CcsError } from '../errors.js';

type Rewrite = [RegExp, string | ((...groups: string[]) => string)];

/** Longest first where one flag is the start of another. */
export const LIBRARY_WORDS: readonly Rewrite[] = [
  [/CCS_TOKEN or --token-file/g, 'the token given to createServiceClient'],
  [/CCS_SIGNING_KEY_FILE or --signing-key/g, "createServiceClient's signer"],
  [/update CCS_TOKEN/g, 'update the token'],
  [/--signature-hash \/ --signature-padding/g, "the scheme given to createSigner"],
  [/HTTPS_PROXY or --proxy/g, "HTTPS_PROXY or createServiceClient's network.proxy"],
  [/--proxy/g, "createServiceClient's network.proxy"],
  [/--ca-file/g, "createServiceClient's network.tls.ca"],
  [/--base-url \(CCS_BASE_URL\)/g, "createServiceClient's baseUrl"],
  [/--base-url/g, "createServiceClient's baseUrl"],
  [/--max-errors (\d+)/g, 'maxErrors: $1'],
  [/--max-errors/g, 'maxErrors'],
  [/--outage-timeout (\d+(?:\.\d+)?) ?s\b/g, (_, seconds) => `breaker.outageTimeoutMs: ${Math.round(Number(seconds) * 1000)}`],
  [/--outage-timeout/g, 'breaker.outageTimeoutMs'],
  [/--accept-changed-source/g, 'acceptChangedSource: true'],
  [/--resume/g, 'resume: true'],
  [/--overwrite/g, 'overwrite: true'],
  [/--dry-run/g, 'dryRun: true'],
  [/--identity none/g, "identity: { by: 'none' }"],
  [/--identity column:([^\s,;)]+)/g, "identity: { by: 'column', column: '$1' }"],
  [/--identity/g, 'identity'],
  [/--map '?([a-z_]+)=([^'\s;]+)'?/g, "map: { $1: '$2' }"],
  [/--map/g, 'map'],
  [/--ignore-column '?([^'\s;]+)'?/g, "ignoreColumns: ['$1']"],
  [/--ignore-column/g, 'ignoreColumns'],
  [/--date-format/g, 'dateFormat'],
  [/--concurrency/g, 'concurrency'],
  [/--max-concurrency/g, 'maxConcurrency'],
  [/--held-cache/g, 'heldCache'],
  [/--results/g, 'results'],
  [/--failed/g, 'failed'],
  [/--report/g, 'report'],
  [/--header-row/g, 'read.headerRow'],
  [/--sheet/g, 'read.sheet'],
  [/--encoding/g, 'read.encoding'],
  [/--delimiter/g, 'read.delimiter'],
  [/--max-record-size/g, 'read.maxRecordSize'],
  [/--check-service/g, 'matchService: true'],
  [/--created-from/g, 'createdFrom'],
  [/--created-to/g, 'createdTo'],
  [/--period/g, 'period'],
  [/--new-since-last/g, 'newSinceLast'],
  [/--since-last/g, 'sinceLast'],
  [/--dates-in-timezone/g, 'datesInTimeZone'],
  [/--timezone/g, 'timeZone'],
  [/--out '([^']*)'/g, "out: '$1'"],
  [/--out (\S+)/g, "out: '$1'"],
  [/--out\b/g, 'out'],
  [/ccs-bulk check\b/g, 'checkSetup()'],
];

/** A message with every flag named as the option that sets it. */
export function inLibraryWords(text: string): string {
  let out = text;
  for (const [pattern, replacement] of LIBRARY_WORDS) {
    out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, (match, ...groups: unknown[]) => replacement(match, ...(groups.filter((g) => typeof g === 'string') as string[])));
  }
  return out;
}

/** The error, its message in library words (our own errors only: a caller's is theirs). */
export function toLibraryWords<E>(error: E): E {
  if (error instanceof CcsError) error.message = inLibraryWords(error.message);
  return error;
}
