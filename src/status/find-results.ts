/**
 * Which results files `ccs-bulk status` looks at: in a folder, every `*.results.csv`, every
 * shard's (`*.shard-K-of-N*`) and any file with a `.meta.json` sidecar beside it; a file named
 * is taken as a results file when it is one, else as an input whose results lie beside it.
 */
import { type Dirent, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { looksLikeResults } from '../import/record/results-guard.js';
import { metaPath, readMeta, readMetaText } from '../import/record/results-meta.js';

export interface Found {
  results: string[];
  /** Paths that do not exist or cannot be read, each with why. */
  problems: { path: string; message: string; code: 'input_missing' | 'input_unreadable' }[];
}

const SHARD = /\.shard-\d+-of-\d+/;
/** Beside a results file, never one: its sidecar, its lock, a lock takeover, a temp file being written. */
const NOT_RESULTS = /(?:\.meta\.json|\.lock|\.lock\.takeover|\.tmp)$/;

export function findResults(paths: readonly string[]): Found {
  const found: Found = { results: [], problems: [] };
  const seen = new Set<string>();
  const add = (path: string) => {
    if (seen.has(resolve(path))) return;
    seen.add(resolve(path));
    found.results.push(path);
  };
  for (const path of paths) {
    let directory: boolean;
    try {
      directory = statSync(path).isDirectory();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') found.problems.push({ path, message: `${path} does not exist`, code: 'input_missing' });
      else found.problems.push({ path, message: `cannot read ${path}: ${code ?? error}`, code: 'input_unreadable' });
      continue;
    }
    if (directory) {
      const listed = listFolder(path);
      if (typeof listed === 'string') found.problems.push({ path, message: listed, code: 'input_unreadable' });
      else listed.forEach(add);
    } else if (readMetaText(path) !== undefined || looksLikeResults(path)) add(path);
    else {
      const beside = resultsOfInput(path);
      if (typeof beside === 'string') found.problems.push({ path, message: beside, code: 'input_unreadable' });
      else beside.forEach(add);
    }
  }
  return found;
}

/** The folder's results files, by name; a message when it cannot be listed. */
function listFolder(folder: string): string[] | string {
  let entries: Dirent[];
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch (error) {
    return `cannot list ${folder}: ${(error as NodeJS.ErrnoException).code ?? error}`;
  }
  const names = new Set(entries.map((entry) => entry.name));
  return entries
    .filter((entry) => !entry.isDirectory() && !NOT_RESULTS.test(entry.name))
    .map((entry) => entry.name)
    .filter((name) => name.endsWith('.results.csv') || SHARD.test(name) || names.has(basename(metaPath(name))))
    .sort()
    .map((name) => join(folder, name))
    // A shard's --failed file matches the name too: only a file with a sidecar or a results header counts.
    .filter((path) => readMetaText(path) !== undefined || looksLikeResults(path));
}

/** An input named: the results files beside it whose sidecar names it, or whose name starts with its own. */
function resultsOfInput(input: string): string[] | string {
  const listed = listFolder(dirname(input));
  if (typeof listed === 'string') return listed;
  const name = `${basename(input)}.`;
  const mine = listed.filter((results) => {
    if (basename(results).startsWith(name)) return true;
    const meta = readMeta(results);
    if (meta?.input === undefined || meta.input === '') return false;
    return resolve(meta.runner?.cwd ?? dirname(results), meta.input) === resolve(input);
  });
  return mine.length > 0 ? mine : `${input} is not a ccs-bulk results file, and no results file beside it names it`;
}
