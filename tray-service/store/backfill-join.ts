import type { Db } from 'mongodb';
import { DAY_MS } from '../../shared/time/durations.ts';
import { dayOf } from '../../shared/tray/storage-keys.ts';
import { communityDay, EVENTS, type StoredEventDoc } from '../../shared/tray/tray-record.ts';
import { spanOfJoin } from '../memberships/membership-intervals.ts';
import type { Activity, MembershipChange } from '../worker/activity.ts';
import { mapEvent } from '../worker/map-event.ts';
import { applyActivities, type ApplyActivitiesOptions } from './apply-activities.ts';
import { communityIntervals } from './membership-store.ts';

/** Stored posts read and applied per round: bounds memory whatever the community's volume. */
export const BACKFILL_BATCH = 50;

/**
 * A join processed after posts that it precedes adds those posts to the member's tray
 * (docs/tray-engine.md#membership-by-time): the community's stored post events whose createdAt
 * falls in the membership span the join opened, applied to that member alone through
 * applyActivities, the same path as a live fan-out. The events are read one UTC day at a time by
 * equality (`communityDay`), from the join's day to the span's end or tomorrow, so a join
 * processed on time reads one day, and a late one no further back than events are kept
 * (EVENTS_RETENTION_DAYS) or records live (TRAY_RETENTION_DAYS). Idempotent: the grouping core makes
 * re-applying an action a no-op, so a redelivered join, a retried job, or a post whose own
 * fan-out already reached the member adds nothing twice. Runs for every join, also a redelivered
 * one, because a job that stored its join and failed before this step must add the posts when retried.
 */
export async function backfillJoins(
  db: Db,
  changes: readonly MembershipChange[],
  options: ApplyActivitiesOptions & { eventsRetentionDays: number },
): Promise<void> {
  const joins = changes.filter((change) => change.active);
  const now = (options.now ?? Date.now)();
  const oldest = now - Math.min(options.retentionDays, options.eventsRetentionDays) * DAY_MS;
  for (const communityId of new Set(joins.map((join) => join.communityId))) {
    const intervals = await communityIntervals(db, communityId);
    for (const join of joins.filter((change) => change.communityId === communityId)) {
      const span = spanOfJoin(intervals.get(join.userId) ?? [], join.at);
      if (!span) continue;
      const from = Math.max(span.from, oldest);
      // Tomorrow: a post dated a little ahead of the tray's clock (the platform's clock) still counts.
      const until = Math.min(span.to, now + DAY_MS);
      for (let day = Date.parse(dayOf(from)); day < until; day += DAY_MS) {
        await backfillDay(db, communityId, dayOf(day), { from, to: span.to }, join.userId, options);
      }
    }
  }
}

async function backfillDay(
  db: Db,
  communityId: string,
  day: string,
  span: { from: number; to: number },
  userId: string,
  options: ApplyActivitiesOptions,
): Promise<void> {
  const events = db.collection<StoredEventDoc>(EVENTS);
  const stored = await events
    .find({ communityDay: communityDay(communityId, day) }, { projection: { _id: 1, activityAt: 1 } })
    .toArray();
  const due = stored
    .filter(({ activityAt = -Infinity }) => activityAt >= span.from && activityAt < span.to)
    .sort((a, b) => (a.activityAt ?? 0) - (b.activityAt ?? 0));
  for (let start = 0; start < due.length; start += BACKFILL_BATCH) {
    const activities: Activity[] = [];
    for (const { _id } of due.slice(start, start + BACKFILL_BATCH)) {
      const event = await events.findOne({ _id });
      if (event) activities.push(...postsFor(event, communityId, userId));
    }
    await applyActivities(db, activities, options);
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
