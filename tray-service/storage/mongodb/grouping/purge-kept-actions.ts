import type { Db, Filter } from 'mongodb';
import type { ActorInfo } from '../../../domain/activity.ts';
import { deletedActor } from '../../../domain/deleted-user.ts';
import { TRAY_TARGET_ACTIONS, TRAY_TARGET_ACTORS } from '../collections/collection-names.ts';
import { latestExpiry } from '../driver/latest-expiry.ts';
import { deletedAmong } from './deleted-users.ts';
import { renameKeptActor } from './target-actions.ts';
import { renameGroupActor } from './target-actors.ts';

/** Expired documents read per round: each round handles their groups whole. */
export const PURGE_KEPT_BATCH = 1_000;

interface Grouped {
  _id: string;
  group: string;
  expiresAt: Date;
}

/**
 * When a group's kept actions and actors may go: the latest expiry among its actors, each at
 * their latest action (tray_target_actors, by equality on `group`); undefined when it has none.
 * No record built from the group is newer than its newest action (a record's lastUpdate is its
 * newest counted action's time), so none outlives that.
 */
export function groupKeptUntil(db: Db, group: string): Promise<Date | undefined> {
  return latestExpiry(db, TRAY_TARGET_ACTORS, { group });
}

/**
 * The purge of the group actors and kept actions (docs/storage.md#kept-actions-live-as-long-as-their-records),
 * which no TTL index expires: a document past its own expiry goes only once its group's newest
 * actor has expired too, since until then a record may count it (a removal computes the record
 * again from the kept actions, new activity counts every actor from the record's countFrom).
 * Reads a batch of expired documents, then per group: deletes its expired documents when the group
 * is over, else moves them to the group's expiry, so no later round (nor the next purge) reads them
 * again until then. Every filter is an equality on `group` or the `expiresAt` range, as FerretDB
 * pushes down. `name` is tray_target_actors or tray_target_actions; returns how many documents went.
 */
export async function purgeKeptActions(
  db: Db,
  name: string,
  now: Date,
  batch = PURGE_KEPT_BATCH,
): Promise<number> {
  let purged = 0;
  const expired = { expiresAt: { $lte: now } };
  const collection = db.collection<Grouped>(name);
  for (;;) {
    const found = await collection
      .find(expired, { projection: { _id: 0, group: 1 }, limit: batch })
      .toArray();
    for (const group of new Set(found.map((doc) => doc.group))) {
      const keptUntil = await groupKeptUntil(db, group);
      if (keptUntil === undefined || keptUntil <= now)
        purged += (await collection.deleteMany({ group, ...expired })).deletedCount;
      else {
        const moving = await namedActors(db, name, { group, ...expired });
        await collection.updateMany({ group, ...expired }, { $set: { expiresAt: keptUntil } });
        await renameDeletedAgain(db, moving);
      }
    }
    if (found.length < batch) return purged;
  }
}

type KeptDoc = { actor?: ActorInfo; activity?: { actor?: ActorInfo } };

/** Each kept collection's snapshot of the document's actor. */
const ACTOR_OF: Record<string, (doc: KeptDoc) => ActorInfo | undefined> = {
  [TRAY_TARGET_ACTORS]: (doc) => doc.actor,
  [TRAY_TARGET_ACTIONS]: (doc) => doc.activity?.actor,
};

/** The users the documents `filter` matches name as they were (not as deleted users). */
async function namedActors(db: Db, name: string, filter: Filter<KeptDoc>): Promise<Set<string>> {
  const named = new Set<string>();
  const actorOf = ACTOR_OF[name];
  if (!actorOf) return named;
  const docs = await db
    .collection<KeptDoc>(name)
    .find(filter, { projection: { _id: 0, actor: 1, 'activity.actor': 1 } })
    .toArray();
  for (const doc of docs) {
    const actor = actorOf(doc);
    if (actor && actor.deleted !== true) named.add(actor.userId);
  }
  return named;
}

/**
 * FerretDB writes each document an update matches back whole, as it read it: a deleted user's
 * rename (renameGroupActor, renameKeptActor) between the move's read and its write was undone, and
 * records computed later from the group named them again. So the users the moved documents named
 * (read before the move) are checked against the deleted users once it is done, and any of those
 * is renamed again. A deletion is final (docs/tray-rules.md#deleted-users).
 */
async function renameDeletedAgain(db: Db, named: ReadonlySet<string>): Promise<void> {
  for (const userId of await deletedAmong(db, named)) {
    const as = deletedActor(userId);
    await renameGroupActor(db, as);
    await renameKeptActor(db, as);
  }
}
