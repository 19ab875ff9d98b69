import { MongoServerError, type Db } from 'mongodb';

export const TRAY_READ_STATE = 'tray_read_state';

/** One document per user: the "Last Read" level of platform document 2.4. */
export interface ReadStateDoc {
  _id: string;
  /** Epoch ms; records updated after it (and not marked read) count as unread. */
  lastReadAt: number;
}

const DUPLICATE_KEY = 11000;

export interface ReadStateRepository {
  /** 0 when the user never called last-read: every unread record counts. */
  lastReadAt(userId: string): Promise<number>;
  markLastRead(userId: string, at: number): Promise<void>;
}

export function createReadStateRepository(db: Db): ReadStateRepository {
  const states = db.collection<ReadStateDoc>(TRAY_READ_STATE);
  return {
    // Served by the _id index.
    async lastReadAt(userId) {
      return (await states.findOne({ _id: userId }))?.lastReadAt ?? 0;
    },
    async markLastRead(userId, at) {
      // $max: two instances answering concurrent calls never move the time backwards.
      const update = () => states.updateOne({ _id: userId }, { $max: { lastReadAt: at } }, { upsert: true });
      try {
        await update();
      } catch (error) {
        // Two first-time upserts raced and this one lost the insert: the document exists now.
        if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
        await update();
      }
    },
  };
}
