// bench:stream's same-run baseline: the live path with nothing of the product's on it. A POST is
// answered 200 at once (as the receiver acknowledges before anything is stored), then written as
// one row by node-postgres (a fan-out's rows in one INSERT) and published on Redis; every bare
// server subscribed writes it as an SSE `record` event to the streams of the users it names (or
// to every stream). No queue, no worker, no tokens, no rendering: the
// figures the product's are read against, timed in the same run on the same machine and stores.
import { fork } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import pg from 'pg';
import { stopChild } from './stop-child.ts';

/** What a bench POSTs to a bare server: the event's data, for these users or (none named) all. */
export interface BareRecord {
  users?: string[];
  data: string;
}

export interface BareStreamServer {
  port: number;
  pid: number;
  /** `/stream?user=<id>`: the SSE path of one user. */
  streamUrl(userId: string): string;
  /** POSTs a record: resolves with the acknowledgement, sent before it is written and published. */
  send(record: BareRecord): Promise<Response>;
  stop(): Promise<void>;
}

interface BareOptions {
  redisUrl: string;
  databaseUrl: string;
  channel: string;
}

type FromBare = { kind: 'listening'; port: number };

const TABLE = 'bare_stream_records';

/** Forks a bare server (this file) and waits until it listens on a loopback port of its own. */
export async function startBareStreamServer(options: BareOptions): Promise<BareStreamServer> {
  const child = fork(import.meta.filename, [], { stdio: 'inherit' });
  process.once('exit', () => child.kill());
  child.on('error', () => undefined);
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the bare stream server exited (${code})`)));
    child.once('message', (message: FromBare) => resolve(message.port));
    child.send(options);
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    port,
    pid: child.pid ?? 0,
    streamUrl: (userId) => `${base}/stream?user=${encodeURIComponent(userId)}`,
    send: (record) =>
      fetch(`${base}/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(record),
      }),
    stop: () => stopChild(child),
  };
}

/** The child: the HTTP server, its pool and its two Redis connections (one subscribed). */
async function serveBare(options: BareOptions): Promise<void> {
  const sql = new pg.Pool({ connectionString: options.databaseUrl, max: 4 });
  sql.on('error', () => {});
  // Several bare servers may start at once: the table is made once, whoever comes first.
  await sql
    .query(`CREATE TABLE IF NOT EXISTS ${TABLE} (id bigserial PRIMARY KEY, user_id text, body text)`)
    .catch(() => undefined);
  const publisher = new Redis(options.redisUrl);
  const subscriber = new Redis(options.redisUrl);
  const streams = new Map<string, Set<ServerResponse>>();
  const write = (res: ServerResponse, data: string) => res.write(`event: record\ndata: ${data}\n\n`);
  subscriber.on('message', (_channel: string, message: string) => {
    const record = JSON.parse(message) as BareRecord;
    if (record.users === undefined) {
      for (const held of streams.values()) for (const res of held) write(res, record.data);
      return;
    }
    for (const user of record.users) for (const res of streams.get(user) ?? []) write(res, record.data);
  });
  await subscriber.subscribe(options.channel);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://bare');
    if (req.method === 'GET' && url.pathname === '/stream') {
      const user = url.searchParams.get('user') ?? '';
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write(': open\n\n');
      const held = streams.get(user) ?? new Set<ServerResponse>();
      streams.set(user, held.add(res));
      res.on('close', () => {
        held.delete(res);
        if (held.size === 0) streams.delete(user);
      });
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const record = JSON.parse(text) as BareRecord;
      const users = record.users ?? [''];
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      // A failure is a record that never arrives: the bench counts it as not delivered.
      sql
        .query(`INSERT INTO ${TABLE} (user_id, body) SELECT unnest($1::text[]), $2`, [users, record.data])
        .then(() => publisher.publish(options.channel, text))
        .catch((error: Error) => process.stderr.write(`bare stream server: ${error.message}\n`));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    const message: FromBare = {
      kind: 'listening',
      port: typeof address === 'object' && address ? address.port : 0,
    };
    process.send?.(message);
  });
}

if (process.send && import.meta.filename === process.argv[1]) {
  process.once('message', (options: BareOptions) => void serveBare(options));
}
