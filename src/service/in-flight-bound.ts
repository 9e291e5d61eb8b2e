/**
 * The most requests `auto` may keep in flight: a safety bound from what this machine can hold,
 * not a pace. The pace is the controller's (concurrency.ts), found from the service's answers;
 * this only keeps a service that never pushes back from exhausting the machine. A request in
 * flight holds a socket (a file descriptor and an ephemeral port) and its buffers; a page
 * prefetched by an export also holds its clients until they are written.
 */
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

/** Never below this, whatever the machine says. */
export const MIN_IN_FLIGHT_BOUND = 1024;
/** Outgoing connections to one address and port share the ephemeral port range (about 28,000). */
export const MAX_IN_FLIGHT = 16_384;
/** File descriptors left for everything but sockets: input, output, log, threads. */
const RESERVED_FILES = 256;
/** The share of the machine's memory that the requests in flight may hold. */
const MEMORY_SHARE = 1 / 8;
/** What one request in flight holds: socket and TLS buffers, body, signature, undici's state (generous). */
export const BYTES_PER_REQUEST = 128 * 1024;
/** What one client holds in a page waiting for the writer: parsed JSON, generously. */
export const BYTES_PER_CLIENT = 4 * 1024;

export interface MachineLimits {
  memoryBytes: number;
  /** The process's open-file limit (Node raises the soft limit to the hard one at start). */
  openFiles: number | undefined;
}

/** This process's limits, read once. */
export function machineLimits(): MachineLimits {
  return { memoryBytes: totalmem(), openFiles: openFileLimit() };
}

/** Requests an import's `--concurrency auto` may reach. */
export function requestBound(machine: MachineLimits): number {
  return bound(machine, BYTES_PER_REQUEST);
}

/** Pages an export's `--prefetch auto` may have requested ahead of the writer, each of `pageSize` clients. */
export function pageBound(machine: MachineLimits, pageSize: number): number {
  return bound(machine, BYTES_PER_REQUEST + pageSize * BYTES_PER_CLIENT, MIN_PAGE_BOUND);
}

/** Pages held are memory the writer has not freed yet: a lower floor than requests'. */
const MIN_PAGE_BOUND = 64;

function bound(machine: MachineLimits, bytesEach: number, floor = MIN_IN_FLIGHT_BOUND): number {
  const byMemory = Math.floor((machine.memoryBytes * MEMORY_SHARE) / bytesEach);
  const byFiles = machine.openFiles === undefined ? MAX_IN_FLIGHT : machine.openFiles - RESERVED_FILES;
  return Math.max(floor, Math.min(MAX_IN_FLIGHT, byMemory, byFiles));
}

/** The soft "Max open files" limit on Linux; undefined elsewhere or when unreadable. */
function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((text) => text.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft === undefined || !/^\d+$/.test(soft) ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}
