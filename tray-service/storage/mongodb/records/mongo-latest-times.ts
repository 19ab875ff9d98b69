import type { Db, Document } from 'mongodb';
import type { LatestTimesPort } from '../../port.ts';

/**
 * The storage port's latest times on MongoDB (last read, delete-all). Keeps each user's latest
 * time in `collection` as `{userId, [field]: at}` documents: a new time is inserted, then the
 * user's older ones are pruned, and the latest is the largest left. Inserts and
 * deletes only, because FerretDB applies update operators as read-modify-write, so two concurrent
 * `$max` updates can lose the larger value (seen in the concurrency test); the prune never deletes
 * a value >= any inserted one, whatever the interleaving of concurrent calls.
 */
export function createMongoLatestTimes(db: Db, collection: string, field: string): LatestTimesPort {
  const times = db.collection<Document>(collection);
  return {
    async latest(userId) {
      const [latest] = await times
        .find({ userId })
        .sort({ [field]: -1 })
        .limit(1)
        .toArray();
      return typeof latest?.[field] === 'number' ? latest[field] : 0;
    },
    async record(userId, at) {
      await times.insertOne({ userId, [field]: at });
      await times.deleteMany({ userId, [field]: { $lt: at } });
    },
  };
}
