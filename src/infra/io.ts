/** The process edges a command may touch, injected so tests and the library pass their own. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Aborted on the first Ctrl-C: stop reading, finish what is in flight, flush. */
  signal?: AbortSignal | undefined;
}
