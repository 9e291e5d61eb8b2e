/**
 * Which results files record each source: by default the import's own names beside it,
 * `<SOURCE>.results.csv` and the shards' `<SOURCE>.results.shard-K-of-N.csv`; with --results,
 * the files named, each given to the source its sidecar (or its name) says it was written for.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { defaultResultsPath } from '../import/defaults.js';
import { readMeta } from '../import/record/results-meta.js';
import { shownPath } from '../infra/printable.js';
import { NO_RESULTS, RESULTS_UNMATCHED } from './codes.js';

export interface SourceResults {
  source: string;
  results: string[];
}

export function resultsOfSources(sources: readonly string[], given: readonly string[] | undefined): SourceResults[] {
  const found = given === undefined ? sources.map((source) => ({ source, results: besideSource(source) })) : assign(sources, given);
  for (const { source, results } of found) {
    if (results.length > 0) continue;
    const named = defaultResultsPath(source);
    throw new UsageError(
      given === undefined
        ? `no results file for ${shownPath(source)}: neither ${shownPath(named)} nor a shard's (${shardPattern(named)}) is there; name the import's results with --results`
        : `no --results file is for ${shownPath(source)}: each names its input in its .meta.json sidecar, or starts with the input's file name`,
      NO_RESULTS,
    );
  }
  return found;
}

/** `clients.csv.results.shard-K-of-N.csv`, for messages. */
function shardPattern(results: string): string {
  const ext = extname(results);
  return `${basename(results.slice(0, results.length - ext.length))}.shard-K-of-N${ext}`;
}

/** The import's default results file and its shards' files, those that exist, shards in order. */
function besideSource(source: string): string[] {
  const results = defaultResultsPath(source);
  const found = isFile(results) ? [results] : [];
  const ext = extname(results);
  const stem = basename(results.slice(0, results.length - ext.length));
  const shard = new RegExp(`^${escapeRegExp(stem)}\\.shard-(\\d+)-of-(\\d+)${escapeRegExp(ext)}$`);
  let names: string[];
  try {
    names = readdirSync(dirname(results));
  } catch {
    return found;
  }
  const shards = names
    .map((name) => ({ name, match: shard.exec(name) }))
    .filter((entry) => entry.match !== null && isFile(join(dirname(results), entry.name)))
    .sort((a, b) => Number(a.match![2]) - Number(b.match![2]) || Number(a.match![1]) - Number(b.match![1]));
  return [...found, ...shards.map((entry) => join(dirname(results), entry.name))];
}

/** One source: every file is its. Several: each file goes to the source it names. */
function assign(sources: readonly string[], given: readonly string[]): SourceResults[] {
  const unique = given.filter((file, i) => given.findIndex((other) => resolve(other) === resolve(file)) === i);
  if (sources.length === 1) return [{ source: sources[0]!, results: unique }];
  const found = sources.map((source) => ({ source, results: [] as string[] }));
  for (const file of unique) {
    const owner = found.find(({ source }) => writtenFor(file, source));
    if (owner === undefined) {
      throw new UsageError(
        `--results ${shownPath(file)} is for none of the sources: its sidecar names another input (or it has none) and its name does not start with a source's file name`,
        RESULTS_UNMATCHED,
      );
    }
    owner.results.push(file);
  }
  return found;
}

/** The sidecar's input, resolved where the import ran; else the file's name beside the source. */
function writtenFor(results: string, source: string): boolean {
  const meta = readMeta(results);
  if (meta !== undefined && meta.input !== '') {
    return resolve(meta.runner?.cwd ?? dirname(results), meta.input) === resolve(source);
  }
  return dirname(resolve(results)) === dirname(resolve(source)) && basename(results).startsWith(`${basename(source)}.`);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
