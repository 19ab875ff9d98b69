// The client of `npm run bench:api`, forked as a process of its own: a real client never shares the
// server's event loop, and timing both from one loop would charge the server with the client's
// work. For one user at a time it makes each of the job's calls in turn over one keep-alive HTTP
// connection, each followed by the plain statements it stands on (over a pool of their own, run
// together as the API runs them) and by the same statements behind a bare HTTP server (the
// floor), then a bare HTTP hop: all timed the same way, from this process, one call at a time.
// A first round checks the answers against the plain statements, and it and a few more warm the
// paths up; they are not counted.
import { Agent, request } from 'node:http';
import pg from 'pg';
import { POSTGRES_SESSION_OPTIONS } from '../../tray-service/storage/postgres/connect-postgres.ts';
import type { PlainStatement } from './bench-api-plain.ts';

/** One measured call: an API request and the plain statements it stands on. */
export interface BenchCall {
  /** What is measured, as printed. */
  name: string;
  /** Path and query on the tray API. */
  path: string;
  /** The plain statements (one for a page; both counts for GET v3), run together. */
  statements: PlainStatement[];
  /** Path on the bare server that runs the same statements and answers their rows. */
  barePath: string;
  /** How the API's answer is checked against the statements' rows in the first round. */
  check: 'page' | 'counts';
}

export interface BenchClientJob {
  /** The API's base URL, e.g. http://127.0.0.1:40000. */
  base: string;
  /** The bare node:http server's base URL (no trailing slash): `/` answers a constant body (the hop alone). */
  bare: string;
  databaseUrl: string;
  token: string;
  pageSize: number;
  calls: BenchCall[];
  rounds: number;
  /** The warm-up's least duration (ms): it runs WARMUP_ROUNDS rounds and at least this long. */
  warmupMs: number;
}

/** Per call, in the job's order: the API's, the plain statements' and the bare floor's times (ms). */
export interface CallSamples {
  api: number[];
  plain: number[];
  bare: number[];
}

export interface BenchClientSamples {
  calls: CallSamples[];
  /** The bare HTTP hop, timed once a round. */
  hop: number[];
}

/** Parent -> client: a job, the go-ahead after the warm-up, or the end. */
export type ToBenchClient = { kind: 'run'; job: BenchClientJob } | { kind: 'go' } | { kind: 'exit' };
/** Client -> parent: warmed up (waits for `go`), then the samples. */
export type FromBenchClient = { kind: 'warmed' } | { kind: 'samples'; samples: BenchClientSamples };

/** Rounds run before the counted ones (after the checked one): compiled paths, warm caches. */
const WARMUP_ROUNDS = 20;

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

interface PageAnswer {
  data: { v_tarid_uid: string }[];
}
interface CountsAnswer {
  data: { totalUnreadCount: number; totalUnseenCount?: number };
}

/**
 * The API's answer must be what the plain statements read: a page starts with the same records in
 * the same order, the counts are equal. A bench that times wrong answers measures nothing.
 */
function checkAnswer(call: BenchCall, body: string, rows: pg.QueryResultRow[][], pageSize: number): void {
  const fail = (what: string) => {
    throw new Error(`${call.name} (${call.path}): ${what}`);
  };
  if (call.check === 'page') {
    const got = (JSON.parse(body) as PageAnswer).data.slice(0, pageSize).map((r) => r.v_tarid_uid);
    const want = (rows[0] ?? []).slice(0, pageSize).map((row) => String(row.key));
    if (got.join('\n') !== want.join('\n'))
      fail(
        `the API listed ${got.length} records [${got.slice(0, 3).join(', ')}...], the plain page ${want.length} [${want.slice(0, 3).join(', ')}...]`,
      );
    if (want.length === 0) fail('the view is empty: nothing to measure');
    return;
  }
  const { totalUnreadCount, totalUnseenCount } = (JSON.parse(body) as CountsAnswer).data;
  const [unread, unseen] = rows.map((r) => Number(r[0]?.n));
  if (totalUnreadCount !== unread || totalUnseenCount !== unseen)
    fail(
      `the API counted ${totalUnreadCount} unread and ${totalUnseenCount} unseen, the plain statements ${unread} and ${unseen}`,
    );
}

async function run(job: BenchClientJob): Promise<BenchClientSamples> {
  // One connection per statement a call runs together, as the API's pool gives its counts.
  const width = Math.max(...job.calls.map((call) => call.statements.length));
  // The service's session settings (jit=off), as the floor's pool in bench-api.ts has them.
  const sql = new pg.Pool({
    connectionString: job.databaseUrl,
    options: POSTGRES_SESSION_OPTIONS,
    max: width,
  });
  // The bench stops its server when it ends, maybe before this pool has closed.
  sql.on('error', () => undefined);
  const headers = { authorization: `Bearer ${job.token}` };
  const ok = async (url: string, withHeaders: Record<string, string>) => {
    const res = await get(url, withHeaders);
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body.slice(0, 200)}`);
    return res.body;
  };
  const plain = (call: BenchCall) =>
    Promise.all(call.statements.map(async (statement) => (await sql.query(statement)).rows));
  const timed = async <T>(into: number[], work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await work();
    into.push(performance.now() - started);
    return result;
  };
  const samples: BenchClientSamples = {
    calls: job.calls.map(() => ({ api: [], plain: [], bare: [] })),
    hop: [],
  };
  const round = async (counted: boolean, check = false) => {
    for (const [i, call] of job.calls.entries()) {
      const into = counted ? samples.calls[i] : { api: [], plain: [], bare: [] };
      if (!into) throw new Error('bench client: no samples for a call');
      const body = await timed(into.api, () => ok(`${job.base}${call.path}`, headers));
      const rows = await timed(into.plain, () => plain(call));
      await timed(into.bare, () => ok(`${job.bare}${call.barePath}`, {}));
      if (check) checkAnswer(call, body, rows, job.pageSize);
    }
    await timed(counted ? samples.hop : [], () => ok(job.bare, {}));
  };
  try {
    await round(false, true);
    const warming = performance.now();
    for (let r = 0; r < WARMUP_ROUNDS || performance.now() - warming < job.warmupMs; r++) await round(false);
    send({ kind: 'warmed' });
    if ((await next()).kind !== 'go') throw new Error('bench client: expected go');
    for (let r = 0; r < job.rounds; r++) await round(true);
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
