/**
 * The run's identity matching, set up once the plan is settled: who a row's person is, the
 * people of the file so far, and (when a service is asked) the people the service holds. A
 * listing the service refuses or answers without e-mails, and a held file that is not usable,
 * refuse the run (exit 2) before any row; a refused token, an unreachable service or an outage
 * stop it as a request would (every row `not_attempted`, `--resume` continues).
 */
import { AuthError, CcsError, ConnectionError, OutageError } from '../../errors.js';
import type { PrintTable } from '../../infra/fingerprints.js';
import type { ServiceClient } from '../../service/client.js';
import type { ClassifyRules, Held } from '../row/classify-row.js';
import type { RawRecord } from '../read/index.js';
import type { ClientFields } from '../row/validate-row.js';
import { DEFAULT_IDENTITY, type Identity, PersonSet, personFinder } from '../row/identity.js';
import type { Recorder } from '../record/recorder.js';
import { type HeldEmails, type HeldSummary, learnHeldEmails, type ListingProgress } from './held-emails.js';
import { defaultHeldCache } from './held-file.js';
import { authStop } from './sender.js';

export interface MatchInput {
  identity: Identity | undefined;
  headers: readonly string[];
  file: string;
  service: ServiceClient | undefined;
  serviceIdentity: string;
  /** Dry runs ask the service only when told to (validate --check-service). */
  dryRun: boolean;
  matchService: boolean;
  /** A path, false (this run alone), or undefined (the user's cache folder). */
  heldCache: string | false | undefined;
  /** The client ids earlier runs of the results file created (--resume), as quickPrint prints. */
  createdIds: PrintTable;
  signal: AbortSignal | undefined;
  onListing: ((progress: ListingProgress) => void) | undefined;
}

export interface Matching {
  people: ClassifyRules['people'];
  held: HeldEmails | undefined;
  /** The listing's figures, when the service was asked. */
  listing: HeldSummary | undefined;
  /** Why the listing stopped the run before any row, if it did (stopFor). */
  stop?: unknown;
  close(): void;
}

/**
 * Who the people are; the service's people too, unless the identity is not the e-mail or no
 * service is asked. Throws what refuses the run; a stop (a refused token, no connection, an
 * outage, Ctrl-C) is returned as `stop`, for the recorder (stopFor).
 */
export async function startMatching(input: MatchInput): Promise<Matching> {
  const identity = input.identity ?? DEFAULT_IDENTITY;
  const of = personFinder(identity, input.headers, input.file);
  const people = of && { of, set: new PersonSet(), label: identity.by === 'column' ? identity.column : 'e-mail' };
  const asks = identity.by === 'email' && input.service !== undefined && (!input.dryRun || input.matchService);
  if (!asks) return { people, held: undefined, listing: undefined, close() {} };
  try {
    const { held, summary } = await learnHeldEmails({
      service: input.service!,
      cache: cachePath(input),
      serviceIdentity: input.serviceIdentity,
      own: input.createdIds.size > 0 ? input.createdIds : undefined,
      signal: input.signal,
      onProgress: input.onListing,
    });
    return { people, held, listing: summary, close: () => held.close() };
  } catch (error) {
    if (!isStop(error)) throw error;
    return { people, held: undefined, listing: undefined, stop: error, close() {} };
  }
}

const isStop = (error: unknown) =>
  error instanceof AuthError ||
  error instanceof ConnectionError ||
  error instanceof OutageError ||
  (error instanceof CcsError && (error.code === 'interrupted' || error.code === 'wait_interrupted'));

function cachePath(input: MatchInput): string | undefined {
  if (input.heldCache === false) return undefined;
  return input.heldCache ?? defaultHeldCache(input.serviceIdentity, input.service!.account);
}

/** The listing's stop as the run's: every row is then `not_attempted`. */
export function stopFor(recorder: Recorder, error: unknown): void {
  if (error instanceof AuthError) return recorder.stop('auth', error.message, 'auth', authStop(error));
  if (error instanceof ConnectionError) {
    return recorder.stop('connection', error.message, error.code, { cause: error.message.slice(0, -error.fix.length - 2), fix: error.fix });
  }
  if (error instanceof OutageError) return recorder.stop('outage', error.message, error.code);
  recorder.interrupted();
}

/** The fields the service returns, as a row sends them: equal when the service holds the row as sent. */
const RETURNED = ['name', 'email', 'country', 'address', 'currency'] as const;

/**
 * A resumed run's row whose person the service holds under another client than its results
 * file knows: the earlier run may have created it and stopped before writing its answer. The
 * client is fetched: holding exactly what the row sends, it is the row's (`created`, not sent
 * again); otherwise the person was there already (`existing`). Nothing is sent either way.
 */
export async function settleHeld(
  service: ServiceClient,
  recorder: Recorder,
  raw: RawRecord,
  fields: ClientFields,
  key: string,
  held: Extract<Held, { kind: 'one' }>,
): Promise<void> {
  let same = false;
  try {
    const client = (await service.getClient(held.id)).data as Record<string, unknown>;
    same = RETURNED.every((field) => (client[field] ?? undefined) === (fields[field] ?? undefined));
  } catch {
    // Not fetched: the person is there, so nothing is sent; `existing` says so.
  }
  if (same) return recorder.createdUnrecorded(raw, key, held.id);
  recorder.settle(raw, { kind: 'existing', key, held });
}
