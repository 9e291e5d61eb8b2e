/**
 * Who ran an import, with what, on which file: what a results file's sidecar records so that
 * an operator taking a migration over, or an auditor signing it off, can tell one run from
 * another without the shell history of the machine it ran on.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { redactArg } from '../../infra/redact.js';

/** The running ccs-bulk and where it runs. */
export interface Runner {
  toolVersion: string | undefined;
  user: { name: string | undefined; uid: number | undefined };
  host: string;
  pid: number;
  /** Relative paths on the command line are relative to this. */
  cwd: string;
  /** Redacted (infra/redact.ts): a token or a proxy password is never recorded. */
  commandLine: string[] | undefined;
}

/** The input as it was when the run began; `sha256` once hashed (hashFile). */
export interface SourceStamp {
  size: number;
  mtime: string;
  sha256?: string | undefined;
}

let version: { value: string | undefined } | undefined;

/** package.json's version, read once: dist/ and src/ sit at the same depth below it. */
export function toolVersion(): string | undefined {
  if (version === undefined) {
    try {
      const text = readFileSync(new URL('../../../package.json', import.meta.url), 'utf8');
      const value = (JSON.parse(text) as { version?: unknown }).version;
      version = { value: typeof value === 'string' ? value : undefined };
    } catch {
      version = { value: undefined };
    }
  }
  return version.value;
}

export function describeRunner(commandLine: readonly string[] | undefined): Runner {
  return {
    toolVersion: toolVersion(),
    user: currentUser(),
    host: hostname(),
    pid: process.pid,
    cwd: process.cwd(),
    commandLine: commandLine?.map(redactArg),
  };
}

/** os.userInfo throws for a uid with no passwd entry (a container's): the uid alone then. */
function currentUser(): Runner['user'] {
  const uid = process.getuid?.();
  try {
    const info = userInfo();
    return { name: info.username, uid: info.uid >= 0 ? info.uid : uid };
  } catch {
    return { name: undefined, uid };
  }
}

/** Size and modification time of a regular file, or undefined (gone, or not a file). */
export function stampSource(path: string): SourceStamp | undefined {
  try {
    const stats = statSync(path);
    return stats.isFile() ? { size: stats.size, mtime: stats.mtime.toISOString() } : undefined;
  } catch {
    return undefined;
  }
}

/** SHA-256 of a file, read as a stream (64 KiB at a time, whatever its size); undefined if it cannot be read. */
export async function hashFile(path: string): Promise<string | undefined> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 65_536 })) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } catch {
    return undefined;
  }
}
