import type { Db } from 'mongodb';

export const TRAY_READ_STATE = 'tray_read_state';

/**
 * The "Last Read" level (docs/contract.md#what-unread-compares). Each call of last-read inserts one document and
 * then prunes the user's older ones; the user's last-read time is the largest left. Inserts and
 * deletes only, because FerretDB applies update operators as read-modify-write, so two
 * concurrent `$max` updates can lose the larger value (seen in the concurrency test).
 */
export interface ReadStateDoc {
  userId: string;
  /** Epoch ms; records updated after it (and not marked read) count as unread. */
  lastReadAt: number;
}

export interface ReadStateRepository {
  /** 0 when the user never called last-read: every unread record counts. */
  lastReadAt(userId: string): Promise<number>;
  markLastRead(userId: string, at: number): Promise<void>;
}

export function createReadStateRepository(db: Db): ReadStateRepository {
  const states = db.collection<ReadStateDoc>(TRAY_READ_STATE);
  return {
    async lastReadAt(userId) {
      const [latest] = await states.find({ userId }).sort({ lastReadAt: -1 }).limit(1).toArray();
      return latest?.lastReadAt ?? 0;
    },
    async markLastRead(userId, at) {
      await states.insertOne({ userId, lastReadAt: at });
      // Never deletes the largest value (nothing deletes values >= any inserted one), whatever
      // the interleaving of concurrent calls.
      await states.deleteMany({ userId, lastReadAt: { $lt: at } });
    },
  };
}
