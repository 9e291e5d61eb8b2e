/**
 * What an auditor should know that is not a problem by itself: a source that changed since its
 * import (its rows are compared as they are now, so a change shows as a problem where it
 * matters), results written by validate or against another service, a results file read from
 * a sorted copy, results lines for rows the source does not have.
 */
import type { SourceFacts } from './report.js';
import type { ResultsFacts } from './results-files.js';

export function notesOf(sources: readonly SourceFacts[], results: readonly ResultsFacts[], service: string): string[] {
  const notes: string[] = [];
  for (const file of results) {
    const source = sources.find((facts) => facts.path === file.source);
    if (file.writtenBy === 'validate') notes.push(`${file.path} was written by validate: its rows were never sent`);
    if (file.writtenBy === 'import' && file.service !== undefined && file.service !== service) {
      notes.push(`${file.path} was written by an import against ${file.service}; this run verified ${service}`);
    }
    if (source?.sha256 !== undefined && file.sourceSha256 !== undefined && file.sourceSha256 !== source.sha256) {
      notes.push(`${file.source} changed since ${file.path} was written (its SHA-256 then was ${file.sourceSha256}): its rows are compared as they are now`);
    }
    if (source !== undefined && !sameColumns(source.headers, file.inputColumns)) {
      notes.push(`${file.path} repeats other input columns than ${file.source}'s header: is it that file's results?`);
    }
    if (file.sorted) notes.push(`${file.path} was not in row order (a run that did not finish?): read from a sorted copy, the file left as it is`);
  }
  for (const source of sources) {
    const stray = source.tally.strayLines;
    if (stray > 0) notes.push(`${source.path}: ${stray} results line${stray === 1 ? ' is' : 's are'} for rows the source does not have`);
  }
  return notes;
}

/** A results header writes an input column named like a result column `input.<name>`. */
function sameColumns(headers: readonly string[], columns: readonly string[]): boolean {
  if (columns.length > headers.length) return false;
  return columns.every((column, i) => column === headers[i] || column === `input.${headers[i]}`);
}
