// `node scripts/time-pg-user-deletion.ts [--records 2000000] [--members 10000] [--comments 200]`: a
// quick timing, by hand, of a user's deletion on the PostgreSQL adapter (deleted-users.ts) in a
// tray of --records records of other users, where the deleted user posted in a community of
// --members members and wrote --comments comments to as many users. Prints the deletion's time
// beside the baseline of the same run: the one statement a deletion used to send, the rename
// filter over every record, as a bare SELECT (it stops at PG_STATEMENT_TIMEOUT_MS, 10 s, at a few
// million records). Uses DATABASE_URL's server when set (in a database of its own), else starts a
// throwaway PostgreSQL cluster in a temp dir.
import { parseArgs } from 'node:util';
import { migrate } from '../tray-service/storage/postgres/migrate.ts';
import { createPostgresMembersImport } from '../tray-service/storage/postgres/postgres-members-import.ts';
import { createPostgresWrites } from '../tray-service/storage/postgres/postgres-writes.ts';
import type { Activity } from '../tray-service/domain/activity.ts';
import { bigClubPost } from './lib/big-club-post.ts';
import { openScratchPostgres } from './lib/scratch-postgres.ts';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '2000000' },
    members: { type: 'string', default: '10000' },
    comments: { type: 'string', default: '200' },
  },
});
const records = Number(args.records);
const members = Number(args.members);
const comments = Number(args.comments);
const T0 = Date.now() - 86_400_000;
const context = { now: Date.now(), retentionDays: 90 };

/** A comment by the deleted user on `owner`'s post. */
const comment = (owner: string, index: number): Activity => ({
  verb: 'comment',
  targetId: `p-${owner}`,
  targetType: 'post',
  targetName: 'Feed',
  lastActionId: `cm-${index}`,
  feed: { kind: 'user', id: owner, name: owner },
  actor: { userId: 'u-gone', name: 'Gone', imageUrl: 'https://img.example/gone.png' },
  at: T0 + index,
  audience: { kind: 'user', userId: owner },
});

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  const { pool, close } = await openScratchPostgres('deletion');
  try {
    await migrate(pool);
    let started = Date.now();
    for (let from = 0; from < records; from += 500_000) {
      await pool.query(
        `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id, feed,
           actors, actors_count, count_from, last_update, unread_at, changed_at, expires_at)
         SELECT 'u' || (i % 100000), tray_record_key('comment', 'p' || i, 'u' || (i % 100000)), 'comment', 'p' || i,
           'post', 'Club', 'a' || i, '{}',
           json_build_array(json_build_object('userId', 'x' || i, 'name', 'X', 'at', $3::bigint)), 1, $3, $3, $3, $3,
           $3::bigint + 7776000000
         FROM generate_series($1::bigint, $2::bigint) AS i`,
        [from, Math.min(records, from + 500_000) - 1, T0],
      );
      process.stdout.write(`  ${Math.min(records, from + 500_000).toLocaleString('en')} records\n`);
    }
    const importer = createPostgresMembersImport(pool);
    for (let start = 0; start < members; start += 5_000)
      await importer.importBatch(
        Array.from({ length: Math.min(5_000, members - start) }, (_, index) => ({
          communityId: 'c-big',
          userId: `m${start + index}`,
          since: T0 - 1,
        })),
        T0 - 1,
      );
    const writes = createPostgresWrites(pool);
    await writes.fanOutPosts('c-big', [bigClubPost('u-gone', T0, 'p-gone')], context);
    for (let index = 0; index < comments; index += 100)
      await writes.applyPersonal(
        Array.from({ length: Math.min(100, comments - index) }, (_, n) =>
          comment(`u${index + n}`, index + n),
        ),
        context,
      );
    await pool.query('ANALYZE');
    console.log(
      `tray: ${records.toLocaleString('en')} records of others, set up in ${seconds(Date.now() - started)}`,
    );

    // Baseline: the old statement's filter over every record (no statement timeout here).
    started = Date.now();
    const { rows } = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM tray_records
       WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(actors::jsonb) AS e
                     WHERE e->>'userId' = ANY($1::text[])
                       AND e - 'at' <> jsonb_build_object('userId', e->'userId', 'name', 'Deleted user', 'deleted', true))`,
      [['u-gone']],
    );
    const baseline = Date.now() - started;
    console.log(
      `baseline, the old rename's filter over every record: ${seconds(baseline)} (${rows[0]?.n} named)`,
    );

    let told = 0;
    started = Date.now();
    await writes.applyProfiles([{ userId: 'u-gone', displayName: 'Gone', deleted: true, at: context.now }], {
      ...context,
      onWritten: async (batch) => {
        told += batch.length;
      },
    });
    const deletion = Date.now() - started;
    console.log(
      `deletion (applyProfiles, every step): ${seconds(deletion)}, ${told.toLocaleString('en')} records renamed`,
    );
  } finally {
    await close();
  }
}

await main();
