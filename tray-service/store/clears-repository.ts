import type { Db } from 'mongodb';

export const TRAY_CLEARS = 'tray_clears';

/** When a user last deleted their whole tray (v3/delete-all): what a reconnecting stream is told. */
export interface ClearDoc {
  userId: string;
  clearedAt: number;
}

export interface ClearsRepository {
  /** 0 when the user never cleared their tray. */
  lastClearedAt(userId: string): Promise<number>;
  markCleared(userId: string, at: number): Promise<void>;
}

/**
 * Insert, then prune the user's older marks (the read-state pattern, read-state-repository.ts):
 * FerretDB's update operators are not atomic, inserts and deletes never lose the larger value.
 */
export function createClearsRepository(db: Db): ClearsRepository {
  const clears = db.collection<ClearDoc>(TRAY_CLEARS);
  return {
    async lastClearedAt(userId) {
      const marks = await clears.find({ userId }).toArray();
      return Math.max(0, ...marks.map((mark) => mark.clearedAt));
    },
    async markCleared(userId, at) {
      await clears.insertOne({ userId, clearedAt: at });
      await clears.deleteMany({ userId, clearedAt: { $lt: at } });
    },
  };
}
