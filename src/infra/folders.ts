/**
 * The folders a scheduled run writes into (the report's, the state's, the log's) are made when
 * missing, so the documented crontab line works on its first night in an empty directory. The
 * state and the log are private (folders made 0700, the files themselves 0600); a report's
 * folder follows the umask, like any folder its owner makes.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { shellQuote } from '../cli/resume-command.js';

export interface FolderOf {
  /** A file that is about to be written. */
  file: string;
  /** True for state and log files: a folder made for them is 0700. */
  private: boolean;
}

/** The missing folders above `file`, outermost first. */
function missingFolders(file: string): string[] {
  const missing: string[] = [];
  let folder = dirname(resolve(file));
  while (!existsSync(folder)) {
    missing.unshift(folder);
    const parent = dirname(folder);
    if (parent === folder) break;
    folder = parent;
  }
  return missing;
}

/**
 * Makes every missing folder above each file; returns the folders made. When one cannot be
 * made, a single error names every folder still missing, with the `mkdir -p` line to run.
 */
export function makeParentFolders(files: readonly FolderOf[]): string[] {
  const made: string[] = [];
  for (const { file, private: isPrivate } of files) {
    for (const folder of missingFolders(file)) {
      try {
        mkdirSync(folder, isPrivate ? { mode: 0o700 } : {});
        made.push(folder);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        if (code === 'EEXIST') continue;
        const still = [...new Set(files.flatMap((each) => missingFolders(each.file)))];
        throw new UsageError(
          `cannot create the folder ${folder}: ${code}; create the missing folder${still.length > 1 ? 's' : ''} first: mkdir -p ${still.map(shellQuote).join(' ')}`,
          'output_unwritable',
          { cause: error },
        );
      }
    }
  }
  return made;
}

