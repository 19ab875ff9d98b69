import { MongoBulkWriteError, type AnyBulkWriteOperation, type Db } from 'mongodb';
import { TRAY_RECORDS, USER_PROFILES, type TrayRecordDoc } from '../../shared/tray/tray-record.ts';
import { DELETED_USER_NAME, type ProfileChange } from '../worker/activity.ts';
import { renameActor } from '../worker/apply-activity.ts';
import { casUpdateRecords } from './cas-update-records.ts';
import { endMemberships } from './membership-store.ts';

const DUPLICATE_KEY = 11000;

/** user_profiles: the latest known profile of each user (user.didUpdate / user.didDelete). */
export interface UserProfileDoc {
  /** The user id. */
  _id: string;
  displayName: string;
  imageUrl?: string;
  avatarCustomUrl?: string;
  deleted: boolean;
  /** Epoch ms (receivedAt) of the change applied; older deliveries are ignored. */
  updatedAt: number;
}

/**
 * Keeps user_profiles current. A rename changes no stored record (platform document 2.3.7): names
 * are snapshots taken when each actor acted. A delete (2.8, 3.3) rewrites the user's snapshots in
 * every record to `Deleted user` (FerretDB has no positional `$` update, so records are rewritten
 * with compare-and-set), removes the deleted user's own tray and ends their memberships.
 */
export async function applyProfileChanges(
  db: Db,
  changes: readonly ProfileChange[],
  owner: string,
): Promise<void> {
  if (changes.length === 0) return;
  const ops: AnyBulkWriteOperation<UserProfileDoc>[] = changes.map((change) => ({
    updateOne: {
      filter: { _id: change.userId, updatedAt: { $lt: change.at } },
      update: profileUpdate(change),
      upsert: true,
    },
  }));
  try {
    await db.collection<UserProfileDoc>(USER_PROFILES).bulkWrite(ops, { ordered: false });
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (error.err || writeErrors.some((w) => w.code !== DUPLICATE_KEY)) throw error;
  }
  const deleted = changes.filter((change) => change.deleted);
  if (deleted.length > 0) await forgetDeletedUsers(db, deleted, owner);
}

/** Sets the new profile; an image the new profile lacks is removed, not kept from the old one. */
function profileUpdate(change: ProfileChange) {
  const $set: Partial<UserProfileDoc> = {
    displayName: change.displayName,
    deleted: change.deleted,
    updatedAt: change.at,
  };
  const $unset: Partial<Record<'imageUrl' | 'avatarCustomUrl', ''>> = {};
  if (change.imageUrl) $set.imageUrl = change.imageUrl;
  else $unset.imageUrl = '';
  if (change.avatarCustomUrl) $set.avatarCustomUrl = change.avatarCustomUrl;
  else $unset.avatarCustomUrl = '';
  return Object.keys($unset).length > 0 ? { $set, $unset } : { $set };
}

async function forgetDeletedUsers(db: Db, deleted: readonly ProfileChange[], owner: string): Promise<void> {
  const ids = deleted.map((change) => change.userId);
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  await records.deleteMany({ userId: { $in: ids } });
  const touched = await records.find({ 'actors.userId': { $in: ids } }, { projection: { _id: 1 } }).toArray();
  const idSet = new Set(ids);
  await casUpdateRecords(
    db,
    touched.map((doc) => doc._id),
    (_key, current) => {
      if (!current) return 'unchanged';
      let next: TrayRecordDoc = current;
      for (const actor of current.actors) {
        if (!idSet.has(actor.userId)) continue;
        const renamed = renameActor(next, actor.userId, DELETED_USER_NAME);
        if (renamed !== 'unchanged') next = renamed;
      }
      return next === current ? 'unchanged' : next;
    },
    { owner },
  );
  await endMemberships(db, ids, Math.max(...deleted.map((change) => change.at)));
}
