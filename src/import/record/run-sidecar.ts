/**
 * One run's sidecar (results-meta.ts) while its results file is open: written when the file
 * opens (a run killed later still says who started it, when, on which input), again once the
 * input's SHA-256 is known (hashed beside the run, not before it), and when the file closes,
 * with how the run ended and its lines by outcome. A sidecar with a start and no end, and no
 * live lock on the file, is a run that was killed.
 */
import { redactSecrets } from '../../infra/redact.js';
import { type ResultsMeta, type RunEnd, writeMeta } from './results-meta.js';

/** Why a run stopped, as the recorder says it (recorder.ts Stop). */
export interface RunStop {
  reason: string;
  message: string;
}

/** Recorded for a run closed without end(): it threw (its output said why). */
const ENDED_BY_ERROR: RunStop = { reason: 'error', message: 'the run ended with an error (its output or --log-file says which)' };

export class RunSidecar {
  /** Lines written so far (and kept from the run resumed), by outcome. */
  readonly counts: Record<string, number> = {};
  #meta: ResultsMeta;
  #closing = false;
  #end: { stop: RunStop | undefined } | undefined;

  constructor(
    readonly results: string,
    meta: ResultsMeta,
    readonly sourceHash: Promise<string | undefined> | undefined,
  ) {
    this.#meta = meta;
  }

  /** The first write; then the hash's, when it comes while the run still goes. */
  open(): void {
    writeMeta(this.results, this.#meta);
    void this.sourceHash?.then((sha256) => {
      if (this.#closing || !this.#addHash(sha256)) return;
      try {
        writeMeta(this.results, this.#meta);
      } catch {
        // written again when the run ends
      }
    });
  }

  count(outcome: string, n = 1): void {
    this.counts[outcome] = (this.counts[outcome] ?? 0) + n;
  }

  end(stop: RunStop | undefined): void {
    this.#end = { stop };
  }

  /** The last write: how the run ended (ENDED_BY_ERROR when no end() was said) and the counts. */
  async finish(): Promise<void> {
    this.#closing = true;
    this.#addHash(await this.sourceHash);
    const stop = this.#end === undefined ? ENDED_BY_ERROR : this.#end.stop;
    const end: RunEnd = {
      finishedAt: new Date().toISOString(),
      state: stop === undefined ? 'finished' : 'stopped',
      ...(stop && { stop: { reason: stop.reason, message: redactSecrets(stop.message) } }),
      counts: { ...this.counts },
    };
    this.#meta = { ...this.#meta, end };
    writeMeta(this.results, this.#meta);
  }

  #addHash(sha256: string | undefined): boolean {
    const { source } = this.#meta;
    if (sha256 === undefined || source === undefined || source.sha256 !== undefined) return false;
    this.#meta = { ...this.#meta, source: { ...source, sha256 } };
    return true;
  }
}
