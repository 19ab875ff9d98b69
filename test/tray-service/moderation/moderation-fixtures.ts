import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  headers: IncomingMessage['headers'];
  body: string;
  /** performance.now() when the request's body had arrived. */
  at: number;
}

/** What the server does with a request: answer with a status, hang, or redirect (307) elsewhere. */
export type StatusAnswer = number | 'hang' | { redirectTo: string };

/** A real HTTP server on 127.0.0.1 answering each request with the next status of `statuses` (the last repeats). */
export async function startStatusServer(
  statuses: readonly StatusAnswer[],
): Promise<{ url: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      requests.push({ headers: req.headers, body, at: performance.now() });
      const status = statuses[Math.min(requests.length - 1, statuses.length - 1)]!;
      if (status === 'hang') return;
      if (typeof status === 'object') {
        res.writeHead(307, { location: status.redirectTo }).end();
        return;
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/decisions`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls until `check` returns a value (not a timed assertion: the test's own timeout bounds it). */
export async function eventually<T>(check: () => Promise<T | undefined>, intervalMs = 50): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
