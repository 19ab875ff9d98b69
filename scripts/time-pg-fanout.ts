// `node scripts/time-pg-fanout.ts [--members 10000] [--posters 1000] [--away 1000] [--kept 0] [--muting 0] [--early 0] [--batch N]`: a quick timing, by hand, of
// the PostgreSQL adapter's post fan-out (--quiet: without live streams to tell) (tray-service/storage/postgres): one post grouped into
// --members members' `post` records, first new records, then grouped into the existing ones, then
// after --posters distinct members have posted (a wide group), then after --away members left and
// came back (each such record counted exactly, docs/tray-rules.md), then 20 posts in one batch, then
// removals of posts (docs/tray-rules.md#inbox), then, with --kept N, one post after N more posts of
// the same posters are kept (an active community's `post` group never ends, so its kept posts grow
// with its history; stored as copies of a kept post, not fanned out one by one), and with
// --muting M, one more post after M members muted the community. Target:
// 10,000 members well under 0.5 s. With `node --expose-gc`, also the heap the worker holds while it
// tells a fan-out's records to live streams. Uses DATABASE_URL's server when set (in a database of its
// own), else starts a throwaway PostgreSQL cluster with fsync on in a temp dir.
import { parseArgs } from 'node:util';
import type { Activity } from '../tray-service/domain/activity.ts';
import type { TrayRecord } from '../tray-service/domain/tray-record.ts';
import { migrate } from '../tray-service/storage/postgres/migrate.ts';
import { createPostgresMembersImport } from '../tray-service/storage/postgres/postgres-members-import.ts';
import { createPostgresWrites } from '../tray-service/storage/postgres/postgres-writes.ts';
import { bigClubPost } from './lib/big-club-post.ts';
import { openScratchPostgres } from './lib/scratch-postgres.ts';

const { values: args } = parseArgs({
  options: {
    members: { type: 'string', default: '10000' },
    posters: { type: 'string', default: '1000' },
    away: { type: 'string', default: '1000' },
    kept: { type: 'string', default: '0' },
    muting: { type: 'string', default: '0' },
    // Posts by this many others before the members joined (an older community's first posters):
    // their actors are the group's oldest, so every member's record counts from after them.
    early: { type: 'string', default: '0' },
    quiet: { type: 'boolean', default: false },
    // Members per fan-out statement (TRAY_FANOUT_BATCH); the adapter's default when not given.
    batch: { type: 'string' },
  },
});
const members = Number(args.members);
const posters = Number(args.posters);
const away = Number(args.away);
const kept = Number(args.kept);
const muting = Number(args.muting);
const early = Number(args.early);
const T0 = Date.UTC(2026, 0, 1);

const post = bigClubPost;

async function main(): Promise<void> {
  const { pool, close } = await openScratchPostgres('fanout');
  if (process.env.EXPLAIN_FANOUT) {
    // Prints each slow statement's plan with its timings (auto_explain at NOTICE level).
    pool.on('connect', (client) => {
      client.on('notice', (notice) => process.stdout.write(`${notice.message}\n`));
      void client.query(
        `LOAD 'auto_explain'; SET auto_explain.log_min_duration = 50; SET auto_explain.log_analyze = ${process.env.EXPLAIN_FANOUT === 'duration' ? 'off' : 'on'}; ` +
          'SET auto_explain.log_level = notice; SET auto_explain.log_nested_statements = on',
      );
    });
  }
  try {
    await migrate(pool);
    const importer = createPostgresMembersImport(pool);
    for (let start = 0; start < members; start += 5_000) {
      const batch = Array.from({ length: Math.min(5_000, members - start) }, (_, index) => ({
        communityId: 'c-big',
        userId: `m${start + index}`,
        since: T0,
      }));
      await importer.importBatch(batch, T0);
    }
    await pool.query('ANALYZE');
    // The plain statement of the design's probe (an upsert of fixed values, no actors computed),
    // on this machine now: what the figures below compare with when other work loads the machine.
    await pool.query(
      `CREATE TABLE probe (user_id text, record_key text, last_update bigint, actors jsonb,
         actors_count int, PRIMARY KEY (user_id, record_key));
       CREATE INDEX probe_page ON probe (user_id, last_update DESC, record_key)`,
    );
    for (const round of [1, 2]) {
      const started = process.hrtime.bigint();
      await pool.query(
        `INSERT INTO probe SELECT user_id, 'post:c-big', $1, '[{"id":"p1","name":"P"}]', 1
         FROM tray_memberships WHERE community_id = 'c-big'
         ON CONFLICT (user_id, record_key) DO UPDATE SET last_update = excluded.last_update,
           actors = excluded.actors || probe.actors, actors_count = probe.actors_count + 1`,
        [round],
      );
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      process.stdout.write(
        `baseline, the probe's plain upsert (${round === 1 ? 'new' : 'grouped'}): ${ms.toFixed(0)} ms\n`,
      );
    }
    const writes = createPostgresWrites(
      pool,
      args.batch === undefined ? {} : { membersPerFanOutStatement: Number(args.batch) },
    );
    let told = 0;
    // With node --expose-gc: the heap the worker holds while it tells a fan-out's or a removal's
    // records (those held until the commit), measured at the first telling.
    const gc = (globalThis as { gc?: () => void }).gc;
    let heapBefore = 0;
    let heapHeld: number | undefined;
    // The worker's clock, as it runs from `now` (WriteContext.clock): a write stamps what lands
    // after a wait when it lands, and restamps what it tells past the live streams' window.
    const context = (now: number) => ({
      now,
      clock: (
        (from) => () =>
          now + (Date.now() - from)
      )(Date.now()),
      retentionDays: 90,
      // --quiet: no live streams to tell, so the statement returns no rows.
      ...(args.quiet
        ? {}
        : {
            onWritten: async (records: readonly TrayRecord[]) => {
              if (gc && heapHeld === undefined) {
                gc();
                heapHeld = process.memoryUsage().heapUsed - heapBefore;
              }
              told += records.length;
            },
          }),
    });
    /** One write timed, with the heap held at its first telling (node --expose-gc). */
    const measure = async (label: string, write: () => Promise<void>) => {
      // What autovacuum does between fan-outs on a live server: without it each round's dead
      // versions slow the next round's probes.
      if (process.env.VACUUM_BETWEEN) await pool.query('VACUUM tray_records');
      told = 0;
      heapHeld = undefined;
      if (gc) {
        gc();
        heapBefore = process.memoryUsage().heapUsed;
      }
      const started = process.hrtime.bigint();
      await write();
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const heap =
        heapHeld === undefined || told === 0
          ? ''
          : `, heap held while telling ${(heapHeld / 1e6).toFixed(0)} MB (${Math.round(heapHeld / told)} bytes a record)`;
      process.stdout.write(`${label}: ${ms.toFixed(0)} ms, ${told} records told${heap}\n`);
    };
    const time = (label: string, posts: Activity[], now: number) =>
      measure(label, () => writes.fanOutPosts('c-big', posts, context(now)));
    if (early > 0)
      for (let start = 0; start < early; start += 100)
        await writes.fanOutPosts(
          'c-big',
          Array.from({ length: Math.min(100, early - start) }, (_, index) =>
            post(`early-${start + index}`, T0 - 3_600_000 + start + index, `p-early-${start + index}`),
          ),
          context(T0 + 1_000),
        );
    await time(`1 post to ${members} members, new records`, [post('m0', T0 + 60_000, 'p-1')], T0 + 61_000);
    for (let round = 1; round <= 3; round++)
      await time(
        `1 post grouped into ${members} existing records (${round}/3)`,
        [post(`m${round}`, T0 + 120_000 + round, `p-2-${round}`)],
        T0 + 121_000 + round,
      );
    // A wide group: --posters distinct members have posted (their actions added in batches).
    for (let start = 2; start < posters; start += 100) {
      const batch = Array.from({ length: Math.min(100, posters - start) }, (_, index) =>
        post(`m${start + index}`, T0 + 180_000 + start + index, `p-w${start + index}`),
      );
      await writes.fanOutPosts('c-big', batch, context(T0 + 181_000));
    }
    await time(
      `1 post grouped, ${posters} distinct posters in the group`,
      [post('m3', T0 + 300_000, 'p-3')],
      T0 + 301_000,
    );
    // --away members left before the wide group's posts and came back after them: from now on
    // their records count exactly the posts of their own time.
    const leavers = Array.from(
      { length: Math.min(away, members - 1) },
      (_, index) => `m${members - 1 - index}`,
    );
    for (const [active, at] of [
      [false, T0 + 150_000],
      [true, T0 + 250_000],
    ] as const)
      await writes.applyMemberships(
        leavers.map((userId) => ({ communityId: 'c-big', userId, active, at })),
        context(T0 + 260_000),
      );
    await time(
      `1 post grouped, ${leavers.length} members away since their record's first post`,
      [post('m4', T0 + 350_000, 'p-4')],
      T0 + 351_000,
    );
    await time(
      '20 posts in one batch, grouped',
      Array.from({ length: 20 }, (_, index) => post(`m${10 + index}`, T0 + 400_000 + index, `p-b${index}`)),
      T0 + 401_000,
    );
    await time(
      'the same 20 posts redelivered (nothing changes)',
      Array.from({ length: 20 }, (_, index) => post(`m${10 + index}`, T0 + 400_000 + index, `p-b${index}`)),
      T0 + 402_000,
    );
    // Removals: the newest post deleted (every member's `post` record shrinks and names the next
    // newest), then a post of the wide group (its author's actor refolded), then the redelivery.
    const remove = (label: string, postId: string, now: number) =>
      measure(label, async () => {
        await writes.applyRemovals?.([{ kind: 'post', id: postId, postId, at: now }], context(now));
      });
    // As autovacuum would have by now on a live server: statistics from when the group actors'
    // table was empty make the planner scan it whole once per member (three times as long).
    if (!process.env.STALE_STATISTICS) await pool.query('ANALYZE');
    await remove(`the newest post deleted, ${members} members' records shrink`, 'p-b19', T0 + 500_000);
    await remove('a post of the wide group deleted', 'p-w500', T0 + 501_000);
    await remove('the same deletion redelivered (nothing changes)', 'p-w500', T0 + 502_000);
    if (kept > 0) {
      await pool.query(
        `INSERT INTO tray_community_posts (community_id, action_id, at, activity, expires_at)
         SELECT community_id, 'p-kept-' || n, at + n, activity, expires_at
         FROM (SELECT * FROM tray_community_posts WHERE community_id = 'c-big' AND action_id = 'p-3') AS one,
              generate_series(1, $1::int) AS n`,
        [kept],
      );
      await pool.query('ANALYZE tray_community_posts');
      await time(
        `1 post grouped, ${kept} more posts kept in the community`,
        [post('m5', T0 + 600_000, 'p-6')],
        T0 + 601_000,
      );
    }
    if (muting > 0) {
      // --muting members mute the community from before its posts (as a PUT would store it).
      await pool.query(
        `INSERT INTO tray_mutes (user_id, target_type, target_id, created_at, until_at, removed_at, expires_at)
         SELECT 'm' || n, 'community', 'c-big', $2::bigint, NULL, NULL, 9223372036854775807
         FROM generate_series(1, $1::int) AS n`,
        [muting, T0],
      );
      await pool.query('ANALYZE tray_mutes');
      await time(
        `1 post grouped, ${muting} members muting the community, ${kept} more posts kept`,
        [post('m5', T0 + 700_000, 'p-7')],
        T0 + 701_000,
      );
    }
  } finally {
    await close();
  }
}

await main();
