/**
 * Reading a file another run (or another account) may have put in place: a sidecar, a review
 * page, the head of a results file. Never through a link, never waiting on a pipe or a device,
 * never more than asked for; anything unreadable is simply "no such file".
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/**
 * A regular file's text, its first `max` bytes, with its stats; undefined when it is not there,
 * not a regular file, or (`whole`) longer than `max`.
 */
export function readRegular(path: string, max: number, options: { whole?: boolean } = {}): { text: string; stats: Stats } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || (options.whole === true && stats.size > max)) return undefined;
    const buffer = Buffer.alloc(Math.min(max, stats.size));
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return { text: buffer.toString('utf8', 0, read), stats };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
