/**
 * A gate in front of a sandbox: an HTTP relay on 127.0.0.1 that forwards requests while open and
 * holds them while closed. Tests that need a run to be "still running" at some moment (another
 * run must find its lock held; a kill must land mid-run) close the gate instead of hoping that
 * slow answers outlast a busy machine's process start-up. Only Create Client (POST) is counted
 * and held: the reads an import makes before its first row (List Clients, who the service
 * already holds) and after (Get Client) always pass. Test infrastructure only.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Gate {
  /** Base URL to give the CLI instead of the sandbox's. */
  url: string;
  /** Create Client requests forwarded so far. */
  readonly forwarded: number;
  /** Create Client requests waiting at the closed gate now. */
  readonly held: number;
  /** Hold every request from now on (or from the `after`-th forwarded one on). */
  close(after?: number): void;
  /** Forward what is held and everything after. */
  open(): void;
  /** Drops what is held (their client is gone) without forwarding it. */
  drop(): void;
  stop(): Promise<void>;
}

export async function startGate(target: string): Promise<Gate> {
  const to = new URL(target);
  let forwarded = 0;
  let closesAt = Number.POSITIVE_INFINITY;
  const waiting: { req: IncomingMessage; res: ServerResponse }[] = [];
  const sockets = new Set<Socket>();

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'POST') forwarded++;
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server = createServer((req, res) => {
    if (req.method === 'POST' && forwarded >= closesAt) waiting.push({ req, res });
    else forward(req, res);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get forwarded() {
      return forwarded;
    },
    get held() {
      return waiting.filter(({ res }) => !res.destroyed).length;
    },
    close(after = 0) {
      closesAt = forwarded + after;
    },
    open() {
      closesAt = Number.POSITIVE_INFINITY;
      for (const { req, res } of waiting.splice(0)) if (!res.destroyed) forward(req, res);
    },
    drop() {
      for (const { res } of waiting.splice(0)) res.destroy();
    },
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
