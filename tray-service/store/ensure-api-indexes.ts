import { MongoServerError, type Collection, type Db, type IndexSpecification } from 'mongodb';
import { TRAY_RECORDS } from '../../shared/tray/tray-record.ts';
import { BLOCK_LIST } from './block-list-repository.ts';
import { TRAY_READ_STATE } from './read-state-repository.ts';

/** IndexOptionsConflict / IndexKeySpecsConflict: the same keys exist under another name (e.g. the worker's). */
const ALREADY_SERVED = new Set([85, 86]);

async function ensure(
  collection: Collection,
  keys: IndexSpecification,
  options: { name: string; unique?: boolean },
): Promise<void> {
  try {
    await collection.createIndex(keys, options);
  } catch (error) {
    if (!(
      error instanceof MongoServerError &&
      typeof error.code === 'number' &&
      ALREADY_SERVED.has(error.code)
    )) {
      throw error;
    }
  }
}

/**
 * Every query of the tray API is served by one of these (DESIGN.md, "Storage rules"). Run at
 * start-up; createIndex is a no-op when the index exists.
 */
export async function ensureApiIndexes(db: Db): Promise<void> {
  const records = db.collection(TRAY_RECORDS);
  // History v3/v2 pages, page counts, unread count, mark-all-as-read, delete-all: equality on
  // userId, then the (lastUpdate desc, _id desc) order walked in index order.
  await ensure(records, { userId: 1, lastUpdate: -1, _id: -1 }, { name: 'api_user_history' });
  // POST v2/read: the caller's record with this verb and target.
  await ensure(records, { userId: 1, targetId: 1, verb: 1 }, { name: 'api_user_target_verb' });
  // POST /block pages (netid_uid equality, blocked_userId order) and GET /block/members checkList ($in).
  await ensure(
    db.collection(BLOCK_LIST),
    { netid_uid: 1, blocked_userId: 1 },
    { name: 'api_block_owner', unique: true },
  );
  // GET /notifications/v3 (the caller's latest last-read time) and the prune after POST v2/last-read.
  await ensure(
    db.collection(TRAY_READ_STATE),
    { userId: 1, lastReadAt: -1 },
    { name: 'api_read_state_user' },
  );
}
