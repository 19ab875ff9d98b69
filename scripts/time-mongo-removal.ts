// `node scripts/time-mongo-removal.ts [--members 10000] [--comments 1000]`: a quick timing, by hand, of
// the MongoDB adapter's removals (tray-service/storage/mongodb/removals, docs/storage.md#removals):
// a deleted post whose community has --members members, each with a `post` record counting it,
// and --comments comments on it for its author; from the removal's call to every tray changed
// (every record written and told, the emptied ones deleted). Same-run baselines: the fan-out that
// grouped the post into those records, and a bare bulk of single-document updates of as many
// documents. Uses MONGODB_URI's server when set (a database of its own), else starts FerretDB 1.24
// on a throwaway PostgreSQL: the test server, whose figures are not MongoDB's.
import { parseArgs } from 'node:util';
import type { AnyBulkWriteOperation } from 'mongodb';
import type { Activity } from '../tray-service/domain/activity.ts';
import type { TrayRecord } from '../tray-service/domain/tray-record.ts';
import type { RemovedRecord } from '../tray-service/storage/port.ts';
import { bigClubPost } from './lib/big-club-post.ts';
import { withTimingMongoStorage } from './lib/timing-mongo-storage.ts';

const { values: args } = parseArgs({
  options: {
    members: { type: 'string', default: '10000' },
    comments: { type: 'string', default: '1000' },
  },
});
const members = Number(args.members);
const comments = Number(args.comments);
const T0 = Date.UTC(2026, 0, 1);
const feed = { kind: 'community' as const, id: 'c-big', name: 'Big Club' };

const post = bigClubPost;

function comment(author: string, at: number, id: string): Activity {
  return {
    verb: 'comment',
    targetId: 'p-del',
    targetType: 'post',
    targetName: 'Big Club',
    parentTargetId: 'c-big',
    lastActionId: id,
    feed,
    communityId: 'c-big',
    actor: { userId: author, name: `Member ${author}` },
    at,
    audience: { kind: 'user', userId: 'm0' },
  };
}

const since = (started: bigint) => (Number(process.hrtime.bigint() - started) / 1e6).toFixed(0);

await withTimingMongoStorage('mongo-removal', async ({ storage, db }) => {
  for (let start = 0; start < members; start += 5_000)
    await storage.members.importBatch(
      Array.from({ length: Math.min(5_000, members - start) }, (_, index) => ({
        communityId: 'c-big',
        userId: `m${start + index}`,
        since: T0,
      })),
      T0,
    );
  let written = 0;
  let removed = 0;
  const context = (now: number) => ({
    now,
    retentionDays: 90,
    onWritten: async (records: readonly TrayRecord[]) => {
      written += records.length;
    },
    onRemoved: async (records: readonly RemovedRecord[]) => {
      removed += records.length;
    },
  });
  await storage.writes.fanOutPosts('c-big', [post('m1', T0 + 60_000, 'p-keep')], context(T0 + 61_000));
  written = 0;
  let started = process.hrtime.bigint();
  await storage.writes.fanOutPosts('c-big', [post('m0', T0 + 120_000, 'p-del')], context(T0 + 121_000));
  process.stdout.write(
    `baseline, the post grouped into ${members} members' records (fan-out): ${since(started)} ms, ${written} records told\n`,
  );
  for (let start = 0; start < comments; start += 100)
    await storage.writes.applyPersonal(
      Array.from({ length: Math.min(100, comments - start) }, (_, index) =>
        comment(
          `m${2 + ((start + index) % (members - 2))}`,
          T0 + 180_000 + start + index,
          `cm-${start + index}`,
        ),
      ),
      context(T0 + 181_000),
    );

  // The bare write: as many single-document updates, 1,000 a bulk, on a scratch collection.
  const scratch = db.collection<{ _id: string; n: number }>('scratch');
  await scratch.insertMany(Array.from({ length: members }, (_, index) => ({ _id: `d${index}`, n: 0 })));
  started = process.hrtime.bigint();
  for (let start = 0; start < members; start += 1_000) {
    const operations: AnyBulkWriteOperation<{ _id: string; n: number }>[] = Array.from(
      { length: Math.min(1_000, members - start) },
      (_, index) => ({ updateMany: { filter: { _id: `d${start + index}` }, update: { $set: { n: 1 } } } }),
    );
    await scratch.bulkWrite(operations, { ordered: false });
  }
  process.stdout.write(
    `baseline, ${members} bare single-document updates (1,000 a bulk): ${since(started)} ms\n`,
  );

  for (const [label, now] of [
    [
      `the post deleted: ${members} members' records shrink, its ${comments} comments' record goes`,
      T0 + 300_000,
    ],
    ['the same deletion redelivered (nothing changes)', T0 + 301_000],
  ] as const) {
    written = 0;
    removed = 0;
    started = process.hrtime.bigint();
    await storage.writes.applyRemovals?.(
      [{ kind: 'post', id: 'p-del', postId: 'p-del', at: now }],
      context(now),
    );
    process.stdout.write(`${label}: ${since(started)} ms, ${written} records told, ${removed} removed\n`);
  }
});
