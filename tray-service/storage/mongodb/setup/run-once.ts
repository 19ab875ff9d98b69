import type { Db } from 'mongodb';
import { TRAY_MIGRATIONS } from '../collections/collection-names.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';

/**
 * Runs a one-time upgrade pass at storage open, once per database: skipped once its name is
 * recorded in TRAY_MIGRATIONS, recorded when it finishes. A pass must be safe to run again
 * (instances opening together, or a start-up after one that stopped half-way, run it too).
 * Returns what the pass counted, 0 when it had already run.
 */
export async function runOnce(db: Db, name: string, pass: () => Promise<number>): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>(TRAY_MIGRATIONS);
  if (await migrations.findOne({ _id: name })) return 0;
  const counted = await pass();
  await ignoreDuplicates(migrations.insertOne({ _id: name, at: new Date() }));
  return counted;
}
