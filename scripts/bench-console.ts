// `npm run bench:console`: latency of the events console's queries on the default storage
// (PostgreSQL) among --events stored events (1,000,000), each through its use case (what the admin
// routes call), beside the plain SQL it stands on and a plain indexed SELECT, all from the same run:
// the newest page, a page deep in the list, each filter (event, webhook, status, userId,
// communityId, moderation, a time range), an event's detail (mapping, recipients among a
// community of --members with --leaves leaves processed after the post, decisions), a page of its
// recipients, and the two 24-hour charts
// (events per minute, lag) read from the per-minute rollups. Target: p99 < 50 ms each.
// Seeding: the events over the last 7 days in SQL (payloads the mapping reads, subjects, moderation
// outcomes, applied times) with their rollups computed by the rule the store statement keeps them
// by; then --through-port more events (10,000) stored and marked applied through the storage port,
// as the worker does, so the rollups' maintenance runs on the full table too.
// Starts a throwaway PostgreSQL cluster unless DATABASE_URL points elsewhere.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DAY_MS } from '../shared/time/durations.ts';
import { LAG_BOUNDS_MS } from '../tray-service/domain/lag-histogram.ts';
import type { EventsFilter } from '../tray-service/domain/events-filter.ts';
import type { PageKey } from '../tray-service/domain/page-cursor.ts';
import { eventsPageQuery } from '../tray-service/storage/postgres/postgres-events.ts';
import { openPostgresStorage } from '../tray-service/storage/postgres/open-postgres-storage.ts';
import { chartRange, createEventCharts } from '../tray-service/use-cases/event-charts.ts';
import { createEventDetail } from '../tray-service/use-cases/event-detail.ts';
import { createEventRecipients } from '../tray-service/use-cases/event-recipients.ts';
import { createEventsQuery } from '../tray-service/use-cases/events-query.ts';
import { judgeStoredEvent } from '../tray-service/domain/judged-event.ts';
import { parseCli, progressBar, runCli } from './lib/cli.ts';
import { createBenchDatabase } from './lib/bench-database.ts';
import { startPostgres } from './lib/local-servers.ts';
import { stopOnSignal, type Stoppable } from './lib/stop-on-signal.ts';
import { POSTGRES_SESSION_OPTIONS } from '../tray-service/storage/postgres/connect-postgres.ts';
import { quantile } from './lib/quantile.ts';

const USAGE = `
usage: npm run bench:console -- [--events 1000000] [--members 10000] [--leaves 20000] [--rounds 200]
                               [--through-port 10000]

Seeds --events stored events (7 days) and a community of --members, the detail's post kept with
--leaves of the community's leaves processed after it, then times each console query
--rounds times through its use case, each followed by its plain SQL. Prints a table; exit 1 if a
target is missed. DATABASE_URL: a server to use instead of a throwaway cluster.
`;

const LIMIT = 50;
const TARGET_MS = 50;
const NAMES = [
  'post.didCreate',
  'comment.didCreate',
  'reaction.didAdd',
  'community.didJoin',
  'community.didLeave',
  'user.didUpdate',
  'channel.didCreate',
  'follow.didCreate',
];
const USERS = 100_000;
const COMMUNITIES = 1_000;
const SPAN_MS = 7 * DAY_MS;

const say = (line: string) => process.stderr.write(`[bench:console] ${line}\n`);
const ms = (n: number) => `${n.toFixed(2)} ms`;

interface Measure {
  name: string;
  /** Through the use case, as the admin route calls it. */
  run: () => Promise<unknown>;
  /** The SQL it stands on, sent as is. */
  plain: () => Promise<unknown>;
}

async function main(): Promise<number> {
  const { values } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        events: { type: 'string', default: '1000000' },
        members: { type: 'string', default: '10000' },
        leaves: { type: 'string', default: '20000' },
        rounds: { type: 'string', default: '200' },
        'through-port': { type: 'string', default: '10000' },
        help: { type: 'boolean', default: false },
      },
    },
    USAGE,
  );
  const total = Number(values.events);
  const members = Number(values.members);
  const leaves = Number(values.leaves);
  const rounds = Number(values.rounds);
  const throughPort = Number(values['through-port']);
  for (const [name, value] of Object.entries({
    events: total,
    members,
    leaves,
    rounds,
    'through-port': throughPort,
  })) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} expects a whole number >= 1`);
  }

  const dir = mkdtempSync(join(tmpdir(), 'bench-console-'));
  const servers: Stoppable[] = [];
  const cleanup = stopOnSignal(async () => {
    for (const server of servers.splice(0).reverse()) await server.stop();
  }, dir);
  try {
    const url = process.env.DATABASE_URL
      ? await createBenchDatabase(process.env.DATABASE_URL, 'bench_console', servers)
      : await (async () => {
          const server = await startPostgres({ dir: join(dir, 'postgres'), durability: 'persistent' });
          servers.push(server);
          return createBenchDatabase(server.url, 'bench_console');
        })();
    const storage = await openPostgresStorage(url, {
      poolSize: 10,
      statementTimeoutMs: 120_000,
      applicationName: 'bench-console',
    });
    const sql = new pg.Pool({ connectionString: url, options: POSTGRES_SESSION_OPTIONS, max: 2 });
    sql.on('error', () => undefined);
    const now = Date.now();
    const newest = now - 60_000;

    // 1. The events, in SQL: received over the last 7 days, newest at i = 0; one in 100 flagged and
    //    one in 1,000 a ban request; 1 in 100 invalid; the community posts of c0 have a payload the
    //    mapping turns into a fan-out (the detail's recipients).
    const seeding = progressBar('seeding events', 'events');
    const started = performance.now();
    seeding.start(total, 0);
    const chunk = 50_000;
    for (let from = 0; from < total; from += chunk) {
      const to = Math.min(total, from + chunk) - 1;
      await sql.query(
        `INSERT INTO stored_events (key, event, webhook, data, received_at, stored_at, expires_at, status,
           error, user_id, community_id, moderation, applied_at)
         SELECT md5('bench-' || i), ($4::text[])[1 + i % 8], CASE WHEN i % 10 = 0 THEN 'backup' ELSE 'main' END,
           jsonb_build_object(
             'post', jsonb_build_object('postId', 'p' || i, 'postedUserId', 'u' || (i * 7919 % ${USERS}),
               'targetType', 'community', 'targetId', 'c' || (i % ${COMMUNITIES}),
               'text', 'Trail is open again, see you at the lake ' || i, 'createdAt', to_char(r AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'mentionees', '[]'::jsonb),
             'community', jsonb_build_object('communityId', 'c' || (i % ${COMMUNITIES}), 'displayName', 'Hiking Club'),
             'users', jsonb_build_array(jsonb_build_object('userId', 'u' || (i * 7919 % ${USERS}), 'displayName', 'User ' || i))),
           r, r + interval '20 ms', r + interval '30 days',
           CASE WHEN i % 100 = 7 THEN 'invalid' ELSE 'applied' END,
           CASE WHEN i % 100 = 7 THEN 'data.post.createdAt: Invalid ISO datetime' END,
           'u' || (i * 7919 % ${USERS}), 'c' || (i % ${COMMUNITIES}),
           CASE WHEN i % 1000 = 3 THEN 'ban-request' WHEN i % 100 = 3 THEN 'flag' ELSE 'none' END,
           r + make_interval(secs => (20 + (i * 37) % 400 + CASE WHEN i % 997 = 0 THEN 4000 ELSE 0 END) / 1000.0)
         FROM (SELECT i::bigint AS i, to_timestamp(($3::bigint - (i::bigint * ${SPAN_MS} / ${total})) / 1000.0) AS r
               FROM generate_series($1::int, $2::int) i) s`,
        [from, to, newest, NAMES],
      );
      seeding.update(to + 1);
    }
    seeding.stop();
    // The rollups, by the rule the store and markApplied statements keep them by.
    await sql.query(
      `INSERT INTO stored_event_minutes (minute, counts, expires_at)
       SELECT minute, jsonb_object_agg(event, n), max(expires_at)
       FROM (SELECT to_timestamp(floor(extract(epoch FROM received_at) / 60) * 60) AS minute, event,
                    count(*)::int AS n, max(expires_at) AS expires_at
             FROM stored_events GROUP BY 1, 2) c
       GROUP BY minute`,
    );
    await sql.query(
      `WITH lags AS (
         SELECT to_timestamp(floor(extract(epoch FROM received_at) / 60) * 60) AS minute,
                (extract(epoch FROM applied_at - received_at) * 1000)::bigint AS lag, expires_at
         FROM stored_events),
       counts AS (
         SELECT minute, width_bucket(lag, $1::bigint[]) AS b, count(*)::int AS n, max(lag) AS top,
                max(expires_at) AS expires_at
         FROM lags GROUP BY 1, 2)
       INSERT INTO stored_event_lag_minutes (minute, count, buckets, max_ms, expires_at)
       SELECT minute, sum(n), jsonb_object_agg(b, n), max(top), max(expires_at) FROM counts GROUP BY minute`,
      [LAG_BOUNDS_MS],
    );
    // The big community's members (c0: the detail's recipients), joined long ago.
    await sql.query(
      `INSERT INTO tray_memberships (community_id, user_id, from_at, to_at)
       SELECT 'c0', 'u' || i, $1::bigint, 9223372036854775807 FROM generate_series(0, $2::int - 1) i`,
      [now - 30 * DAY_MS, members],
    );
    await sql.query('VACUUM ANALYZE');
    say(`seeded ${total} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    // 2. More events through the port, as the worker stores and marks them (the rollups kept by
    //    the same statements), concurrently so they share group commits as a busy worker's do.
    const port = progressBar('storing through the port', 'events');
    const portStarted = performance.now();
    port.start(throughPort, 0);
    let next = 0;
    let stored = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < throughPort; i = next++) {
          const receivedAt = new Date(now - 30_000 + (i % 1_000));
          const event = await storage.events.store(
            {
              key: `port-${i}`,
              event: NAMES[i % NAMES.length] ?? 'post.didCreate',
              data: { n: i },
              webhook: 'main',
              receivedAt,
            },
            { status: 'applied', userId: `u${i % USERS}`, communityId: `c${i % COMMUNITIES}` },
            { retentionDays: 30, now: new Date(receivedAt.getTime() + 15) },
          );
          await storage.events.markApplied(event, new Date(receivedAt.getTime() + 40));
          port.update(++stored);
        }
      }),
    );
    port.stop();
    const portSeconds = (performance.now() - portStarted) / 1000;
    say(`stored and marked ${throughPort} events through the port in ${portSeconds.toFixed(1)} s`);

    // 3. The queries: through the use cases, each followed by its plain SQL.
    const events = createEventsQuery(storage.events);
    const recipients = createEventRecipients(storage.communityMembers);
    const detail = createEventDetail({ events: storage.events, decisions: storage.decisions, recipients });
    const charts = createEventCharts(storage.events);
    const page = (filter: EventsFilter, after?: PageKey) => events.list(filter, LIMIT, after);
    const plainPage = (filter: EventsFilter, after?: PageKey) =>
      sql.query(eventsPageQuery(filter, new Date(), LIMIT, after));
    // A key deep in the list: the 20th page's start.
    let deep: PageKey | undefined;
    for (let n = 0; n < 20; n++) deep = (await page({}, deep)).next;
    const someUser = `u${(123 * 7919) % USERS}`;
    const bigPost = (
      await sql.query<{ key: string }>(
        `SELECT key FROM stored_events WHERE community_id = 'c0' AND event = 'post.didCreate' AND status = 'applied' AND data ? 'post'
         ORDER BY received_at DESC LIMIT 1`,
      )
    ).rows[0]?.key;
    if (!bigPost) throw new Error('no post of c0 seeded');
    const bigEvent = await storage.events.get(bigPost);
    if (!bigEvent) throw new Error('the post of c0 is not readable');
    // The post kept (the place the recipients are judged at), and --leaves of the community's
    // leaves processed after it (an old post in a community with churn): the worst case of the
    // late leavers' read, which looks at every leave processed since. One in 100 is dated before
    // the post, of a user the intervals still hold, so none turns out late: the read's cost, not
    // its output (the conformance cases check that).
    const [kept] = judgeStoredEvent(bigEvent).activities.filter(
      (activity) => activity.audience.kind === 'community',
    );
    if (!kept) throw new Error('the post of c0 maps to no community post');
    await sql.query(
      `INSERT INTO tray_community_posts (community_id, action_id, at, activity, expires_at, processed)
       VALUES ('c0', $1, $2, $3, $4, 2)`,
      [kept.lastActionId, kept.at, JSON.stringify(kept), now + 30 * DAY_MS],
    );
    await sql.query(
      `INSERT INTO tray_membership_changes (community_id, user_id, at, joined, processed)
       SELECT 'c0', 'u' || (i % $3::int), CASE WHEN i % 100 = 0 THEN $1::bigint - 1000 - i ELSE $1::bigint + 1000 + i END,
         false, 10 + i
       FROM generate_series(0, $2::int - 1) i`,
      [kept.at, leaves, members],
    );
    await sql.query('ANALYZE tray_membership_changes, tray_community_posts');
    const day = chartRange(new Date(now - DAY_MS), new Date(now));
    const hourAgo = new Date(now - 3_600_000);
    const filters: [string, EventsFilter][] = [
      ['list, no filter (newest page)', {}],
      ['filter event=post.didCreate', { event: 'post.didCreate' }],
      ['filter webhook=backup', { webhook: 'backup' }],
      ['filter status=invalid', { status: 'invalid' }],
      [`filter userId (${total / USERS} events a user)`, { userId: someUser }],
      [`filter communityId (${total / COMMUNITIES} events a community)`, { communityId: 'c42' }],
      ['filter moderation=any', { moderation: 'any' }],
      ['filter moderation=flag', { moderation: 'flag' }],
      ['filter moderation=ban-request', { moderation: 'ban-request' }],
      ['filter moderation=none', { moderation: 'none' }],
      ['filter since/until (one hour, 2 h ago)', { since: new Date(now - 2 * 3_600_000), until: hourAgo }],
      // The user's events are all joins (their seeds are 123 modulo USERS, so 3 modulo 8).
      ['filter event + userId', { event: 'community.didJoin', userId: someUser }],
    ];
    // A filter whose page comes back empty times an index probe, not the page it names.
    for (const [name, filter] of filters) {
      if ((await page(filter)).items.length === 0)
        throw new Error(`the seeded events give no page for "${name}"`);
    }
    const measures: Measure[] = [
      ...filters.map(([name, filter]) => ({ name, run: () => page(filter), plain: () => plainPage(filter) })),
      { name: 'list, page 21 (keyset cursor)', run: () => page({}, deep), plain: () => plainPage({}, deep) },
      {
        name: `detail (post to ${members} members: recipients, decisions)`,
        run: () => detail(bigPost),
        plain: () =>
          Promise.all([
            sql.query('SELECT * FROM stored_events WHERE key = $1', [bigPost]),
            sql.query(
              `SELECT count(*) FROM tray_memberships WHERE community_id = 'c0' AND from_at <= $1 AND $1 < to_at`,
              [Date.parse(String((bigEvent.data.post as { createdAt: string }).createdAt))],
            ),
            sql.query(
              'SELECT * FROM moderation_decisions WHERE event_key = $1 ORDER BY decided_at DESC LIMIT 100',
              [bigPost],
            ),
          ]),
      },
      {
        name: 'recipients page (50 of the members)',
        run: () => recipients.page(bigEvent, LIMIT, 'u5000'),
        plain: () =>
          sql.query(
            `SELECT user_id FROM tray_memberships WHERE community_id = 'c0' AND from_at <= $1 AND $1 < to_at
             AND user_id > 'u5000' ORDER BY user_id LIMIT 51`,
            // Members at the post's time, as the detail's count above and the use case date them.
            [Date.parse(String((bigEvent.data.post as { createdAt: string }).createdAt))],
          ),
      },
      {
        name: 'chart: events per minute, 24 h',
        run: () => charts.eventsPerMinute(day),
        plain: () =>
          sql.query(
            'SELECT minute, counts FROM stored_event_minutes WHERE minute >= $1 AND minute < $2 ORDER BY minute',
            [new Date(day.from), new Date(day.to)],
          ),
      },
      {
        name: 'chart: lag p50/p99/max, 24 h',
        run: () => charts.lag(day),
        plain: () =>
          sql.query(
            'SELECT minute, count, buckets, max_ms FROM stored_event_lag_minutes WHERE minute >= $1 AND minute < $2 ORDER BY minute',
            [new Date(day.from), new Date(day.to)],
          ),
      },
    ];
    const baseline = () =>
      sql.query(
        `SELECT key, received_at FROM stored_events ORDER BY received_at DESC, key DESC LIMIT ${LIMIT + 1}`,
      );

    const timed = async (work: () => Promise<unknown>) => {
      const at = performance.now();
      await work();
      return performance.now() - at;
    };
    const measuring = progressBar('measuring', 'calls');
    measuring.start(measures.length * rounds, 0);
    const results: { name: string; run: number[]; plain: number[]; base: number[] }[] = [];
    for (const measure of measures) {
      for (let warm = 0; warm < 5; warm++) {
        await measure.run();
        await measure.plain();
      }
      const result = { name: measure.name, run: [] as number[], plain: [] as number[], base: [] as number[] };
      for (let round = 0; round < rounds; round++) {
        result.run.push(await timed(measure.run));
        result.plain.push(await timed(measure.plain));
        result.base.push(await timed(baseline));
        measuring.increment();
      }
      for (const list of [result.run, result.plain, result.base]) list.sort((a, b) => a - b);
      results.push(result);
    }
    measuring.stop();

    const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
    const base = results.flatMap((result) => result.base).sort((a, b) => a - b);
    const out = [
      `bench:console  ${total} stored events over 7 days (+${throughPort} through the port: ${Math.round(throughPort / portSeconds)} events/s stored and marked), a community of ${members} with ${leaves} leaves processed after the detail's post; ${rounds} rounds each; node ${process.version}, PostgreSQL storage`,
      `plain indexed SELECT (newest ${LIMIT + 1} by stored_events_received), interleaved with every query: p50 ${ms(quantile(base, 0.5))}, p99 ${ms(quantile(base, 0.99))}`,
      '',
      row(['query (through its use case)', 'p50', 'p99', 'plain SQL p50', 'plain SQL p99', 'target']),
      row(['---', '---:', '---:', '---:', '---:', '---']),
    ];
    let missed = false;
    for (const result of results) {
      const p99 = quantile(result.run, 0.99);
      const met = p99 < TARGET_MS;
      if (!met) missed = true;
      out.push(
        row([
          result.name,
          ms(quantile(result.run, 0.5)),
          ms(p99),
          ms(quantile(result.plain, 0.5)),
          ms(quantile(result.plain, 0.99)),
          `${met ? 'MET' : 'MISSED'} (p99 < ${TARGET_MS} ms)`,
        ]),
      );
    }
    process.stdout.write(`${out.join('\n')}\n`);
    await sql.end();
    await storage.close();
    return missed ? 1 : 0;
  } finally {
    await cleanup();
  }
}

runCli(main);
