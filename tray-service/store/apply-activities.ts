import type { Db } from 'mongodb';
import type { TrayRecordDoc } from '../../shared/tray/tray-record.ts';
import { recordKey, type Activity } from '../worker/activity.ts';
import { applyActivity, type ApplyOptions } from '../worker/apply-activity.ts';
import type { KeyedLock } from '../worker/keyed-lock.ts';
import { casUpdateRecords } from './cas-update-records.ts';
import { postRecipients } from './membership-store.ts';

export interface ApplyActivitiesOptions extends ApplyOptions {
  /** Recipients per read-compute-write round of a fan-out (TRAY_FANOUT_BATCH). */
  fanOutBatch: number;
  /** The job's dedupe key (owner of its write claims). */
  owner: string;
  /** The worker's in-process lock: its own jobs queue up on a hot record instead of colliding. */
  lock?: KeyedLock;
}

interface Delivery {
  recipientId: string;
  activity: Activity;
}

/**
 * Turns activities into record writes. Personal activities (comment, reply, reaction, mention)
 * cost one compare-and-set round; a community post streams the members in large batches, each
 * batch one compare-and-set round. Memberships (2.3.6) gate the community's own target, the
 * `post` record: a comment on a user's post reaches its owner whether or not they still belong to
 * the community (the record's target is the post, not the community).
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
  await writeDeliveries(db, personal, options);

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

async function writeDeliveries(
  db: Db,
  deliveries: Delivery[],
  options: ApplyActivitiesOptions,
): Promise<void> {
  if (deliveries.length === 0) return;
  if (options.lock) {
    const { lock, ...unlocked } = options;
    const keys = deliveries.map(({ activity, recipientId }) =>
      recordKey(activity.verb, activity.targetId, recipientId),
    );
    await lock.run(keys, () => writeDeliveries(db, deliveries, unlocked));
    return;
  }
  // Several deliveries of one job may share a record (a user mentioned twice): fold them in order.
  const byKey = new Map<string, Delivery[]>();
  for (const delivery of deliveries) {
    const key = recordKey(delivery.activity.verb, delivery.activity.targetId, delivery.recipientId);
    byKey.set(key, [...(byKey.get(key) ?? []), delivery]);
  }
  const keys = [...byKey.keys()];
  const compute = (key: string, current: TrayRecordDoc | undefined) => {
    let next = current;
    for (const { activity, recipientId } of byKey.get(key) ?? []) {
      const applied = applyActivity(next, activity, recipientId, options);
      if (applied !== 'unchanged') next = applied;
    }
    return next === current || next === undefined ? 'unchanged' : next;
  };
  await casUpdateRecords(db, keys, compute, { owner: options.owner });
}
