import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { LOOPBACK } from '../config/listen-config.ts';

export interface ListenOptions {
  port: number;
  /** Default loopback: a listener is reachable from other machines only when configured so. */
  host?: string;
  /** Slowloris defence: a client must send all headers within this time. */
  headersTimeoutMs?: number;
  /** A client must send the whole request within this time. */
  requestTimeoutMs?: number;
}

export async function listen(app: Express, options: ListenOptions): Promise<Server> {
  // Node enforces headersTimeout/requestTimeout only when it sweeps connections, every 30 s by
  // default; a 1 s sweep makes the slowloris limits hold to about a second.
  const server = createServer({ connectionsCheckingInterval: 1_000 }, app);
  server.listen(options.port, options.host ?? LOOPBACK);
  server.headersTimeout = options.headersTimeoutMs ?? 10_000;
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return server;
}

/** Stops accepting connections, lets in-flight requests finish, and closes idle keep-alive sockets. */
export async function closeServer(server: Server, graceMs = 10_000): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(timer);
}
