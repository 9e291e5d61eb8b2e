/** What `ccs-bulk status` says about one results file (and prints with --json). */

/**
 * finished / stopped (and why) as the run recorded when it closed the file; killed: its sidecar
 * records a start and no end, and no live run holds the file's lock; in_progress: a live run
 * holds it; unknown: nothing says (a sidecar from a version before ends were recorded, or none).
 */
export type RunState = 'finished' | 'stopped' | 'killed' | 'in_progress' | 'unknown';

export interface ResultsStatus {
  results: string;
  /** The command that wrote it, as its sidecar says (undefined: no sidecar). */
  writtenBy: 'import' | 'validate' | undefined;
  /** A copy an --overwrite kept (results-guard.ts backupName): for the record, not to continue. */
  backup: boolean;
  source: SourceStatus | undefined;
  service: string | undefined;
  state: RunState;
  stop: { reason: string; message: string } | undefined;
  /** The live run holding the file (in_progress). */
  heldBy: { pid: number; host: string; since: string } | undefined;
  startedAt: string | undefined;
  finishedAt: string | undefined;
  user: { name: string | undefined; uid: number | undefined } | undefined;
  host: string | undefined;
  toolVersion: string | undefined;
  commandLine: string[] | undefined;
  /** Earlier runs of this file (it was resumed), as its sidecar keeps them. */
  earlierRuns: number;
  /** The file's lines by outcome, read from the file itself. */
  counts: Record<string, number>;
  /** Lines (rows with an outcome) in the file; the highest row number among them. */
  rows: number;
  lastRow: number | undefined;
  /** Rows not created yet (failed, invalid, not attempted), when the file accounts for every row. */
  rowsLeft: number | undefined;
  /** The command to run next (undefined: nothing to do, or nothing ccs-bulk can do from here). */
  next: string | undefined;
  /** Why, or what to do first. */
  advice: string | undefined;
}

export interface SourceStatus {
  /** As the run was given it (relative to `cwd` in the sidecar). */
  path: string;
  size: number | undefined;
  mtime: string | undefined;
  sha256: string | undefined;
  /** The input now against the sidecar's size and time (not hashed again). */
  now: 'unchanged' | 'changed' | 'missing' | 'unknown';
}
