/**
 * A real HTTP CONNECT forward proxy on 127.0.0.1 for the proxy tests: it opens a TCP tunnel
 * to the target and counts tunnels, so a test can prove requests went through it. It can ask
 * for Basic credentials (407), as company proxies do. Test infrastructure only.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

export interface TestProxy {
  url: string;
  port: number;
  /** Tunnels opened, by target host:port. */
  tunnels: string[];
  /** Proxy-Authorization headers received (to check credentials arrived, never printed). */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

export async function startProxy(options: { credentials?: { user: string; password: string } } = {}): Promise<TestProxy> {
  const tunnels: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const sockets = new Set<Socket>();
  const expected = options.credentials
    ? `Basic ${Buffer.from(`${options.credentials.user}:${options.credentials.password}`).toString('base64')}`
    : undefined;
  const server = createServer((_req, res) => {
    res.writeHead(405, { 'content-type': 'text/plain' }).end('this proxy only tunnels (CONNECT)\n');
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    const auth = req.headers['proxy-authorization'];
    authorizations.push(auth);
    if (expected !== undefined && auth !== expected) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const [host, port] = splitTarget(req.url ?? '');
    // Only loopback targets: this proxy never reaches beyond the machine.
    if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(host)) {
      client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(Number(port), host.replace(/^\[|\]$/g, ''), () => {
      tunnels.push(`${host}:${port}`);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n'));
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    tunnels,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function splitTarget(target: string): [string, string] {
  const at = target.lastIndexOf(':');
  return [target.slice(0, at), target.slice(at + 1)];
}
