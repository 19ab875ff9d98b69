// The client of `npm run bench:api`, forked as a process of its own: a real client never shares the
// server's event loop, and timing both from one loop would charge the server with the client's
// work. For one user at a time it walks the history pages over one keep-alive HTTP connection,
// asking the unread count after each page, each API call followed by the plain indexed SELECT it
// stands on, over one pooled PostgreSQL connection, then a call to a bare HTTP server (the hop's
// floor): all are timed the same way, from this process, one call at a time. A first walk warms
// the paths up and is not counted.
import { Agent, request } from 'node:http';
import pg from 'pg';
import { PLAIN_COUNT_SQL, plainPageSql } from './bench-api-plain.ts';

export interface BenchClientJob {
  /** The API's base URL, e.g. http://127.0.0.1:40000. */
  base: string;
  /**
   * A bare node:http server in the API's process: `/` answers a constant JSON body (the HTTP hop
   * alone), `/count?user=` the plain count run over a pooled connection (the hop and the
   * statement, no framework, no authentication).
   */
  bare: string;
  databaseUrl: string;
  userId: string;
  token: string;
  pageSize: number;
  pages: number;
  rounds: number;
}

export interface BenchClientSamples {
  page: number[];
  plainPage: number[];
  unread: number[];
  plainCount: number[];
  /** The bare HTTP hop, timed after each plain count. */
  hop: number[];
  /** The plain count behind the bare HTTP server (no framework), timed after each hop. */
  bareCount: number[];
  unreadCount: number;
}

/** Parent -> client: a job, the go-ahead after the warm-up, or the end. */
export type ToBenchClient = { kind: 'run'; job: BenchClientJob } | { kind: 'go' } | { kind: 'exit' };
/** Client -> parent: warmed up (waits for `go`), then the samples. */
export type FromBenchClient = { kind: 'warmed' } | { kind: 'samples'; samples: BenchClientSamples };

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const messages: ToBenchClient[] = [];
let waiting: ((message: ToBenchClient) => void) | undefined;
process.on('message', (message: ToBenchClient) => {
  if (waiting) {
    const resolve = waiting;
    waiting = undefined;
    resolve(message);
  } else messages.push(message);
});
const next = () =>
  new Promise<ToBenchClient>((resolve) => {
    const queued = messages.shift();
    if (queued) resolve(queued);
    else waiting = resolve;
  });
const send = (message: FromBenchClient) => process.send?.(message);

async function run(job: BenchClientJob): Promise<BenchClientSamples> {
  const sql = new pg.Pool({ connectionString: job.databaseUrl, max: 1 });
  // The bench stops its server when it ends, maybe before this pool has closed.
  sql.on('error', () => undefined);
  const headers = { authorization: `Bearer ${job.token}` };
  const history = async (boundary: number | undefined) => {
    const query = boundary === undefined ? '' : `?startAfter=${boundary}`;
    const res = await get(`${job.base}/notifications/v3/history${query}`, headers);
    const body = JSON.parse(res.body) as { nextPage: number; data: unknown[] };
    if (res.status !== 200 || body.data.length === 0) throw new Error(`unexpected answer ${res.status}`);
    return body.nextPage === 0 ? undefined : body.nextPage;
  };
  const plainPage = (boundary: number | undefined) =>
    sql.query(plainPageSql(job.pageSize), [job.userId, boundary ?? null]);
  const unread = async () => {
    const res = await get(`${job.base}/notifications/v3`, headers);
    if (res.status !== 200) throw new Error(`unexpected answer ${res.status}`);
    return (JSON.parse(res.body) as { data: { totalUnreadCount: number } }).data.totalUnreadCount;
  };
  const plainCount = () => sql.query(PLAIN_COUNT_SQL, [job.userId]);
  const hop = async () => {
    const res = await get(job.bare, {});
    if (res.status !== 200) throw new Error(`unexpected answer ${res.status}`);
  };
  const bareCount = async () => {
    const res = await get(`${job.bare}count?user=${encodeURIComponent(job.userId)}`, {});
    if (res.status !== 200) throw new Error(`unexpected answer ${res.status}`);
  };
  const timed = async <T>(into: number[], work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await work();
    into.push(performance.now() - started);
    return result;
  };

  const empty = (): BenchClientSamples => ({
    page: [],
    plainPage: [],
    unread: [],
    plainCount: [],
    hop: [],
    bareCount: [],
    unreadCount: 0,
  });
  const samples = empty();
  const walk = async (into: BenchClientSamples) => {
    let startAfter: number | undefined;
    for (let page = 0; page < job.pages; page++) {
      const next = await timed(into.page, () => history(startAfter));
      await timed(into.plainPage, () => plainPage(startAfter));
      into.unreadCount = await timed(into.unread, unread);
      await timed(into.plainCount, plainCount);
      await timed(into.hop, hop);
      await timed(into.bareCount, bareCount);
      startAfter = next;
      if (startAfter === undefined) break;
    }
  };
  try {
    await walk(empty());
    send({ kind: 'warmed' });
    if ((await next()).kind !== 'go') throw new Error('bench client: expected go');
    for (let round = 0; round < job.rounds; round++) await walk(samples);
    return samples;
  } finally {
    await sql.end();
  }
}

for (let message = await next(); message.kind === 'run'; message = await next()) {
  send({ kind: 'samples', samples: await run(message.job) });
}
agent.destroy();
process.disconnect();
