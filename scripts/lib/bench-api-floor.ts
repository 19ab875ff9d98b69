import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import type { PlainStatement } from './bench-api-plain.ts';

/** The bare HTTP server of `bench:api`: the floor under any API call on this machine. */
export interface BenchFloor {
  /** Its base URL (no trailing slash); `/` answers a constant body (the bare hop). */
  url: string;
  /** Serves `statements` at `path`: run together, their rows answered as JSON. */
  serve(path: string, statements: PlainStatement[]): void;
  /** The server itself, for what watches its requests (`--gc`). */
  server: Server;
  close(): void;
}

/**
 * A node:http server in the API's process that runs a call's plain statements together (over
 * `sql`, idle while the client measures) and answers their rows: the hop and the statements, no
 * framework, no authentication, no rate limit. No HTTP API that answers the same can do better.
 */
export async function startBenchFloor(sql: Pick<pg.Pool, 'query'>): Promise<BenchFloor> {
  const paths = new Map<string, PlainStatement[]>();
  const server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(body));
    };
    const statements = paths.get(req.url ?? '/');
    if (!statements) return answer(req.url === '/' ? 200 : 404, { data: {} });
    Promise.all(statements.map((statement) => sql.query(statement))).then(
      (results) => answer(200, { data: results.map((result) => result.rows) }),
      () => answer(500, { data: {} }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (path, statements) => void paths.set(path, statements),
    server,
    close: () => void server.close(),
  };
}
