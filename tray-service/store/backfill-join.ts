import type { Db } from 'mongodb';
import { DAY_MS } from '../../shared/time/durations.ts';
import { EVENTS, type StoredEventDoc } from '../../shared/tray/tray-record.ts';
import { spanOfJoin } from '../memberships/membership-intervals.ts';
import type { Activity, MembershipChange } from '../worker/activity.ts';
import { mapEvent } from '../worker/map-event.ts';
import { applyActivities, type ApplyActivitiesOptions } from './apply-activities.ts';
import { communityIntervals } from './membership-store.ts';

/** Stored posts read and applied per round: bounds memory whatever the community's volume. */
export const BACKFILL_BATCH = 50;

/**
 * A join processed after posts that it precedes adds those posts to the member's tray
 * (docs/tray-engine.md#membership-by-time): the community's stored post events (kept for
 * EVENTS_RETENTION_DAYS, so that is how far back a late join reaches) whose createdAt falls in
 * the membership span the join opened, applied to that member alone through applyActivities,
 * the same path as a live fan-out. Idempotent: the grouping core makes re-applying an action a
 * no-op, so a redelivered join, a retried job, or a post whose own fan-out already reached the
 * member adds nothing twice. Runs for every join, also a redelivered one, because a job that
 * stored its join and failed before this step must still add the posts when retried.
 */
export async function backfillJoins(
  db: Db,
  changes: readonly MembershipChange[],
  options: ApplyActivitiesOptions,
): Promise<void> {
  const joins = changes.filter((change) => change.active);
  const oldest = (options.now ?? Date.now)() - options.retentionDays * DAY_MS;
  const events = db.collection<StoredEventDoc>(EVENTS);
  for (const communityId of new Set(joins.map((join) => join.communityId))) {
    const intervals = await communityIntervals(db, communityId);
    const stored = await events.find({ communityId }, { projection: { _id: 1, activityAt: 1 } }).toArray();
    for (const join of joins.filter((change) => change.communityId === communityId)) {
      const span = spanOfJoin(intervals.get(join.userId) ?? [], join.at);
      if (!span) continue;
      const due = stored
        .filter(
          ({ activityAt = -Infinity }) => activityAt >= Math.max(span.from, oldest) && activityAt < span.to,
        )
        .sort((a, b) => (a.activityAt ?? 0) - (b.activityAt ?? 0));
      for (let start = 0; start < due.length; start += BACKFILL_BATCH) {
        const activities: Activity[] = [];
        for (const { _id } of due.slice(start, start + BACKFILL_BATCH)) {
          const event = await events.findOne({ _id });
          if (event) activities.push(...postsFor(event, communityId, join.userId));
        }
        await applyActivities(db, activities, options);
      }
    }
  }
}

/** The event's community post, addressed to one member instead of the whole community. */
function postsFor(event: StoredEventDoc, communityId: string, userId: string): Activity[] {
  const mapped = mapEvent({ event: event.event, data: event.data, receivedAt: event.receivedAt.getTime() });
  return mapped.activities.flatMap((activity) =>
    activity.audience.kind === 'community' && activity.audience.communityId === communityId
      ? [{ ...activity, audience: { kind: 'user' as const, userId } }]
      : [],
  );
}
