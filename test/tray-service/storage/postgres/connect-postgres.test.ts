import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { connectPostgres } from '../../../../tray-service/storage/postgres/connect-postgres.ts';
import { decodeCursor } from '../../../../tray-service/domain/page-cursor.ts';
import { usePostgres } from '../../../support/use-postgres.ts';

describe('connectPostgres', () => {
  const postgres = usePostgres();

  it('runs statements without JIT compilation, even those the planner costs above jit_above_cost', async () => {
    const pool = connectPostgres(postgres.url, {
      poolSize: 2,
      statementTimeoutMs: 10_000,
      applicationName: 'tests',
    });
    try {
      const client = await pool.connect();
      let rows: { 'QUERY PLAN': [Record<string, unknown>] }[];
      try {
        // A statement the planner overestimates, like the fan-out upsert whose mute lookup it
        // costs above the threshold: a cross join of an empty table it has no statistics of.
        // With JIT on, the server compiles such a statement on every execution (measured:
        // 180-240 ms of LLVM emission for a 6 ms upsert).
        await client.query('CREATE TEMPORARY TABLE never_analyzed (x int)');
        ({ rows } = await client.query<{ 'QUERY PLAN': [Record<string, unknown>] }>(
          `EXPLAIN (ANALYZE, FORMAT JSON)
           SELECT a.x + b.x + c.x FROM never_analyzed a, never_analyzed b, never_analyzed c`,
        ));
      } finally {
        client.release();
      }
      const plan = rows[0]?.['QUERY PLAN'][0] ?? {};
      const cost = (plan.Plan as { 'Total Cost': number })['Total Cost'];
      const { rows: threshold } = await pool.query<{ jit_above_cost: string }>('SHOW jit_above_cost');
      expect(cost, 'the statement is costed above the JIT threshold').to.be.above(
        Number(threshold[0]?.jit_above_cost),
      );
      expect(plan, 'the plan shows no JIT compilation').not.to.have.property('JIT');
    } finally {
      await pool.end();
    }
  });

  // A query waiting for its answer leaves nothing unacknowledged on the socket, so when the server
  // vanishes (host down, network cut) no TCP timer runs and the query waits for ever. Keepalive
  // probes end it; a server that is only slow or stopped still answers them from its kernel.
  // A client that vanished between two statements of a transaction (its host frozen, the network
  // cut without a FIN) left the session idle in its transaction, its locks held, until the
  // server's own keepalive gave up: hours, every writer behind those locks failing meanwhile.
  it('has the server end a session left idle inside its transaction, freeing its locks', async function () {
    this.timeout(20_000);
    const pool = connectPostgres(postgres.url, {
      poolSize: 2,
      statementTimeoutMs: 10_000,
      applicationName: 'tests',
      idleInTransactionMs: 500,
    });
    pool.on('error', () => undefined);
    const other = connectPostgres(postgres.url, {
      poolSize: 1,
      statementTimeoutMs: 10_000,
      applicationName: 'tests',
    });
    try {
      const client = await pool.connect();
      client.on('error', () => undefined);
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(424242)');
      const taken = async () =>
        (await other.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(424242) AS ok')).rows[0]?.ok;
      expect(await taken()).to.equal(false);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await taken()).to.equal(true);
      client.release(true);
    } finally {
      await Promise.all([pool.end(), other.end()]);
    }
  });

  it('sets a minute for it by default', async () => {
    const pool = connectPostgres(postgres.url, {
      poolSize: 1,
      statementTimeoutMs: 10_000,
      applicationName: 'tests',
    });
    try {
      const { rows } = await pool.query<{ timeout: string }>(
        "SELECT current_setting('idle_in_transaction_session_timeout') AS timeout",
      );
      expect(rows[0]?.timeout).to.equal('1min');
    } finally {
      await pool.end();
    }
  });

  it('probes its connections with TCP keepalive after 10 s idle, not the system default of hours', async () => {
    const pool = connectPostgres(postgres.url, {
      poolSize: 1,
      statementTimeoutMs: 10_000,
      applicationName: 'tests',
    });
    try {
      const client = await pool.connect();
      const local = client.connection.stream as unknown as { localPort: number };
      client.release();
      // /proc/net/tcp: local and remote addresses as hex ip:port, then the state, the queues, and
      // the socket's timer: 02 is keepalive, followed by the ticks (1/100 s) until it fires.
      // Matched on both ends: the kernel gives one local port to connections to different servers,
      // so under load another process's connection once shared it (and had its own timer).
      const hex = (port: number | string) => Number(port).toString(16).toUpperCase().padStart(4, '0');
      const [port, serverPort] = [hex(local.localPort), hex(new URL(postgres.url).port)];
      const line = ['/proc/net/tcp', '/proc/net/tcp6']
        .flatMap((table) => readFileSync(table, 'utf8').split('\n'))
        .map((row) => row.trim().split(/\s+/))
        .find(
          (fields) =>
            fields[1]?.endsWith(`:${port}`) && fields[2]?.endsWith(`:${serverPort}`) && fields[3] === '01',
        );
      expect(line, `the pool's connection from port ${local.localPort}`).to.not.equal(undefined);
      const [timer, ticks] = (line?.[5] ?? '').split(':');
      expect(timer, 'the timer running on the idle connection (02: keepalive)').to.equal('02');
      expect(parseInt(ticks ?? '', 16) / 100, 'seconds until the first probe').to.be.at.most(10);
    } finally {
      await pool.end();
    }
  });

  // node-postgres sends a Date in the process's local time by default: west of UTC the earliest
  // time a page cursor may carry (PostgreSQL's first instant) went out as the day before, with a
  // local-mean-time offset cut to whole minutes, and failed the statement (a 500 for a cursor the
  // docs answer 400 or a page). The process's zone is set for real here, as a container's TZ sets it.
  it('sends times as UTC whatever the process’s time zone, down to the earliest a page cursor carries', async () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    const pool = connectPostgres(postgres.url, {
      poolSize: 1,
      statementTimeoutMs: 10_000,
      applicationName: 'tests',
    });
    try {
      const earliest = -210_866_803_200_000;
      const { at } = decodeCursor(Buffer.from(JSON.stringify({ t: earliest, k: 'x' })).toString('base64url'));
      expect(at.getTimezoneOffset(), 'the process runs west of UTC').to.be.above(0);
      const { rows } = await pool.query<{ ms: string }>(
        'SELECT (extract(epoch FROM $1::timestamptz) * 1000)::bigint::text AS ms',
        [at],
      );
      expect(Number(rows[0]?.ms)).to.equal(earliest);
    } finally {
      await pool.end();
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
