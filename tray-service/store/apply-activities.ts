import type { Db } from 'mongodb';
import { membershipId } from '../../shared/tray/tray-record.ts';
import { recordKey, type Activity } from '../worker/activity.ts';
import { applyActivity, type ApplyOptions } from '../worker/apply-activity.ts';
import { casUpdateRecords } from './cas-update-records.ts';
import { memberAt, membershipsOf, postRecipients } from './membership-store.ts';

export interface ApplyActivitiesOptions extends ApplyOptions {
  /** Recipients per read-compute-write round of a fan-out (TRAY_FANOUT_BATCH). */
  fanOutBatch: number;
}

interface Delivery {
  recipientId: string;
  activity: Activity;
}

/**
 * Turns activities into record writes. Personal activities (comment, reply, reaction, mention)
 * cost one membership read and one compare-and-set round; a community post streams the members
 * in large batches, each batch one compare-and-set round (one `$in` read, one bulkWrite).
 */
export async function applyActivities(
  db: Db,
  activities: readonly Activity[],
  options: ApplyActivitiesOptions,
): Promise<void> {
  // An author is never notified of their own action.
  const personal: Delivery[] = activities.flatMap((activity) =>
    activity.audience.kind === 'user' && activity.audience.userId !== activity.actor.userId
      ? [{ recipientId: activity.audience.userId, activity }]
      : [],
  );
  await writeDeliveries(db, await stillMembers(db, personal), options);

  for (const activity of activities) {
    if (activity.audience.kind !== 'community') continue;
    const cursor = postRecipients(db, activity.audience.communityId, activity.at, options.fanOutBatch);
    let batch: Delivery[] = [];
    for await (const { userId } of cursor) {
      if (userId === activity.actor.userId) continue;
      batch.push({ recipientId: userId, activity });
      if (batch.length >= options.fanOutBatch) {
        await writeDeliveries(db, batch, options);
        batch = [];
      }
    }
    await writeDeliveries(db, batch, options);
  }
}

/**
 * A user who left a community gets nothing more from its targets, and after rejoining nothing
 * that happened while away (platform document 2.3.6).
 */
async function stillMembers(db: Db, deliveries: Delivery[]): Promise<Delivery[]> {
  const inCommunity = deliveries.filter((delivery) => delivery.activity.feed.kind === 'community');
  const docs = await membershipsOf(
    db,
    inCommunity.map((delivery) => ({ communityId: delivery.activity.feed.id, userId: delivery.recipientId })),
  );
  return deliveries.filter(
    (delivery) =>
      delivery.activity.feed.kind !== 'community' ||
      memberAt(docs.get(membershipId(delivery.activity.feed.id, delivery.recipientId)), delivery.activity.at),
  );
}

async function writeDeliveries(db: Db, deliveries: Delivery[], options: ApplyOptions): Promise<void> {
  if (deliveries.length === 0) return;
  // Several deliveries of one job may share a record (a user mentioned twice): fold them in order.
  const byKey = new Map<string, Delivery[]>();
  for (const delivery of deliveries) {
    const key = recordKey(delivery.activity.verb, delivery.activity.targetId, delivery.recipientId);
    byKey.set(key, [...(byKey.get(key) ?? []), delivery]);
  }
  await casUpdateRecords(db, [...byKey.keys()], (key, current) => {
    let next = current;
    for (const { activity, recipientId } of byKey.get(key) ?? []) {
      const applied = applyActivity(next, activity, recipientId, options);
      if (applied !== 'unchanged') next = applied;
    }
    return next === current || next === undefined ? 'unchanged' : next;
  });
}
