// `node scripts/time-mongo-counts.ts [--users 2000] [--records 20] [--batch 500]`: a quick timing, by
// hand, of the MongoDB adapter's inbox counts of many users at once (countInboxes, what the live
// streams recount a burst's users with; docs/storage.md#the-inbox) against the same counts taken user
// by user (each user's countUnread with their last-read time and countUnseen, all users at once, as
// inboxCountsOf does without countInboxes). --users users hold --records records each (a fifth
// archived, some read, some seen; half the users have a last-read time); --batch of them are
// counted. Same-run baseline: one user's bare countDocuments({userId}). Uses MONGODB_URI's server
// when set (a database of its own), else starts FerretDB 1.24 on a throwaway PostgreSQL: the test
// server, which pushes no `$in` down, so its figures are not MongoDB's.
import { parseArgs } from 'node:util';
import {
  TRAY_READ_STATE,
  TRAY_RECORDS,
} from '../tray-service/storage/mongodb/collections/collection-names.ts';
import { inboxCounts } from '../tray-service/use-cases/inbox-counts.ts';
import { withTimingMongoStorage } from './lib/timing-mongo-storage.ts';

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '2000' },
    records: { type: 'string', default: '20' },
    batch: { type: 'string', default: '500' },
  },
});
const users = Number(args.users);
const perUser = Number(args.records);
const batch = Math.min(users, Number(args.batch));
const ROUNDS = 5;
const T0 = Date.UTC(2026, 0, 1);
const NOW = T0 + 86_400_000;

const since = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;
/** The median of ROUNDS timed runs, in ms. */
async function median(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = process.hrtime.bigint();
    await run();
    times.push(since(started));
  }
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] ?? Number.NaN;
}

await withTimingMongoStorage('mongo-counts', async ({ storage, db }) => {
  const userId = (n: number) => `u${n}`;
  // Documents with the fields the counts read, written straight (the worker's path is not timed here).
  for (let start = 0; start < users; start += 100) {
    const docs = [];
    for (let n = start; n < Math.min(users, start + 100); n += 1)
      for (let r = 0; r < perUser; r += 1)
        docs.push({
          _id: `comment_p${n}.${r}_${userId(n)}`,
          userId: userId(n),
          lastUpdate: T0 + r * 1_000,
          unreadAt: T0 + r * 1_000,
          hasRead: r % 3 === 0,
          isSeen: r % 4 === 0,
          box: r % 5 === 0 ? 'archived' : 'inbox',
          expiresAt: new Date(NOW + 86_400_000),
          version: 1,
        });
    await db.collection<{ _id: string }>(TRAY_RECORDS).insertMany(docs, { ordered: false });
  }
  await db.collection(TRAY_READ_STATE).insertMany(
    Array.from({ length: Math.ceil(users / 2) }, (_, n) => ({
      userId: userId(n * 2),
      lastReadAt: T0 + (n % 4) * 5_000,
    })),
  );
  const counted = Array.from({ length: batch }, (_, n) => userId(Math.floor((n * users) / batch)));
  const countInboxes = storage.inbox?.countInboxes;
  if (!countInboxes) throw new Error('this storage has no countInboxes');
  const many = () => countInboxes(counted, NOW);
  const each = () => Promise.all(counted.map((one) => inboxCounts(storage, one, NOW)));

  const batched = await many();
  const oneByOne = await each();
  const differing = counted.filter(
    (one, n) =>
      batched.get(one)?.unread !== oneByOne[n]?.totalUnreadCount ||
      batched.get(one)?.unseen !== oneByOne[n]?.totalUnseenCount,
  );
  if (differing.length > 0) throw new Error(`the counts differ for ${differing.join(', ')}`);

  const floor = await median(() => db.collection(TRAY_RECORDS).countDocuments({ userId: userId(0) }));
  const atOnce = await median(many);
  const oneEach = await median(each);
  process.stdout.write(
    `${users * perUser} records of ${users} users; ${batch} users counted (median of ${ROUNDS})\n` +
      `baseline, one user's bare countDocuments({userId}): ${floor.toFixed(1)} ms\n` +
      `countInboxes, ${batch} users at once: ${atOnce.toFixed(1)} ms\n` +
      `user by user (last-read time, unread and unseen counts each), all at once: ${oneEach.toFixed(1)} ms\n`,
  );
});
