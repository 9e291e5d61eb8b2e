/**
 * What the two incremental modes do alike with their state files: read one only when it is the
 * running user's own (absent before the first run), and replace one atomically once the
 * export's output is in place.
 */
import { rename, unlink } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { assertOwnExisting } from '../infra/output-files.js';
import { tempBeside } from '../infra/temp-files.js';

/**
 * `open(path)`, or undefined when there is no state yet. Another account's state would choose
 * what this run writes: a --since-last bound in 2099 makes every night empty.
 */
export async function openState<T>(path: string, open: (path: string) => Promise<T>): Promise<T | undefined> {
  assertOwnExisting(path);
  try {
    return await open(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the state file ${path}: ${code ?? 'error'}`, 'state_invalid');
  }
}

/**
 * Writes the new state to a temp file beside `path` with `write`, then renames it over `path`:
 * a crash leaves the old state or the new one, never half. A failure says what the state's
 * loss means for the next run (`nextRun`).
 */
export async function replaceState<T>(path: string, write: (temp: string) => Promise<T>, nextRun: string): Promise<T> {
  const temp = tempBeside(path);
  try {
    const written = await write(temp);
    await rename(temp, path);
    return written;
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw new UsageError(
      `the export was written but the state file ${path} could not be: ${(error as NodeJS.ErrnoException).code ?? error}; ${nextRun}`,
      'state_invalid',
    );
  }
}
