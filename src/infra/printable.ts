import { readFileSync } from 'node:fs';

/**
 * Text from outside (a file name, a lock file's fields) made safe to print: control characters
 * (C0, DEL, C1), line and paragraph separators and bidirectional overrides are shown as
 * `\uXXXX`, so a name cannot move the cursor, recolour the terminal or turn the line around.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A path as messages show it. */
export function shownPath(path: string): string {
  return printable(path);
}

/** `user NAME (uid N)` from /etc/passwd where it is there, else `uid N`. */
export function ownerOf(uid: number): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (id === String(uid) && name) return `user ${shownPath(name)} (uid ${uid})`;
    }
  } catch {
    // no passwd file: the number alone
  }
  return `uid ${uid}`;
}
