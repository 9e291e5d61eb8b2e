/**
 * The evidence an auditor keeps: one JSON file (what was compared with what, the counts, every
 * problem), a readable summary beside it, and the JSON's SHA-256 in a `.sha256` file that
 * `sha256sum -c` checks. Each is written private (0600: they hold client data) at a temp name
 * and renamed into place, so a file under the name is always whole; the JSON is streamed (the
 * problems come from the spool, however many) and hashed as it is written.
 */
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, lstatSync, renameSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
import { CcsError, UsageError } from '../errors.js';
import { BlockWriter, checkDistinctPaths, createPrivate, INPUT, refuseLink } from '../infra/output-files.js';
import { shownPath } from '../infra/printable.js';
import { tempBeside } from '../infra/temp-files.js';
import { describeRunner } from '../import/record/provenance.js';
import { renderSummary } from './evidence-html.js';
import type { ProblemLog } from './problems.js';
import { type EvidenceWritten, evidenceHead, type VerifyReport } from './report.js';

export interface EvidencePaths {
  json: string;
  /** The readable summary: the JSON's name with .html for .json. */
  summary: string;
  /** `<json>.sha256`: the two files' SHA-256 in sha256sum's format. */
  checksum: string;
}

export function evidencePaths(json: string): EvidencePaths {
  const summary = /\.json$/i.test(json) ? json.replace(/\.json$/i, '.html') : `${json}.html`;
  return { json, summary, checksum: `${json}.sha256` };
}

/**
 * Before anything is read or asked: the three outputs are none of the inputs, no link, and
 * not there already unless --overwrite.
 */
export function checkEvidencePaths(paths: EvidencePaths, inputs: readonly string[], overwrite: boolean): void {
  checkDistinctPaths([
    ...inputs.map((path) => ({ flag: INPUT, path })),
    { flag: '--evidence', path: paths.json },
    { flag: '--evidence (its summary)', path: paths.summary },
    { flag: '--evidence (its checksum)', path: paths.checksum },
  ]);
  if (overwrite) return;
  for (const path of [paths.json, paths.summary, paths.checksum]) {
    if (exists(path)) {
      throw new UsageError(`${shownPath(path)} exists: evidence is never replaced unless asked; name another --evidence file, or add --overwrite`, 'output_exists');
    }
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The JSON, then the summary, then the checksum file naming both: the last file written says both are whole. */
export async function writeEvidence(
  paths: EvidencePaths,
  report: VerifyReport,
  problems: ProblemLog,
  commandLine: readonly string[] | undefined,
): Promise<EvidenceWritten> {
  const sha256 = await writeEvidenceJson(paths.json, evidenceHead(report, describeRunner(commandLine)), problems);
  const summary = renderSummary(report, { json: paths.json, sha256, checksum: paths.checksum });
  await writeText(paths.summary, summary);
  const summarySha256 = sha256Of(summary);
  await writeText(paths.checksum, checksumText([{ path: paths.json, sha256 }, { path: paths.summary, sha256: summarySha256 }]));
  return { json: paths.json, sha256, summary: paths.summary, summarySha256, checksum: paths.checksum };
}

/** Marks where the problems go in the head's JSON: the head's last key, so its last occurrence. */
const PROBLEMS_VALUE = '\u0000problems\u0000';
const PROBLEMS_MARK = JSON.stringify(PROBLEMS_VALUE);

/**
 * Writes the evidence JSON: `head` (every key but the problems, in its order), then the
 * problems from the spool. Returns its SHA-256 (hex).
 */
export async function writeEvidenceJson(path: string, head: Record<string, unknown>, problems: ProblemLog): Promise<string> {
  const text = JSON.stringify({ ...head, problems: PROBLEMS_VALUE }, null, 2);
  const at = text.lastIndexOf(PROBLEMS_MARK);
  const hash = createHash('sha256');
  await writeWhole(path, async (write) => {
    const put = (part: string) => {
      hash.update(part);
      write(part);
    };
    put(`${text.slice(0, at)}[`);
    let first = true;
    for await (const line of problems.lines()) {
      put(`${first ? '' : ','}\n    ${line}`);
      first = false;
    }
    put(`${first ? '' : '\n  '}]${text.slice(at + PROBLEMS_MARK.length)}\n`);
  });
  return hash.digest('hex');
}

export function sha256Of(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** sha256sum's format: the hash, two spaces, the name (beside the checksum file, so checked from its folder). */
export function checksumText(files: readonly { path: string; sha256: string }[]): string {
  return files.map(({ path, sha256 }) => `${sha256}  ${basename(path)}\n`).join('');
}

export async function writeText(path: string, text: string): Promise<void> {
  await writeWhole(path, (write) => write(text));
}

/** A new private file at a temp name beside `path`, filled, fsynced and renamed over it. */
async function writeWhole(path: string, fill: (write: (text: string) => void) => void | Promise<void>): Promise<void> {
  refuseLink(path);
  const temp = tempBeside(path);
  const fd = createPrivate(temp);
  try {
    const out = new BlockWriter(fd, temp);
    await fill((text) => out.write(text));
    out.flush();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path);
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // Closed already, before the rename failed.
    }
    rmSync(temp, { force: true });
    if (error instanceof UsageError) throw error;
    // writeFully's own message speaks of an import's rows: said here for the evidence.
    const why = error instanceof CcsError ? 'the write failed (disk full?)' : ((error as NodeJS.ErrnoException).code ?? (error as Error).message);
    throw new UsageError(`cannot write ${shownPath(path)}: ${why}`, 'output_unwritable');
  }
}
