import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { dayOf } from '../records/storage-keys.ts';
import { EVENTS } from '../collections/collection-names.ts';
import { communityDay } from '../collections/events-collection.ts';
import { spanOfJoin } from '../../../domain/membership-intervals.ts';
import type { Activity, MembershipChange } from '../../../domain/activity.ts';
import { mapEvent } from '../../../domain/map-event.ts';
import { applyPersonalActivities } from './apply-personal-activities.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';
import { membersSpans } from '../memberships/membership-changes.ts';
import type { EventDoc } from '../collections/events-collection.ts';
import { payloadOf } from '../events/escaped-keys.ts';
import { readMembersActions } from '../grouping/target-actions.ts';

/**
 * Activities applied per call, the joiners' together: bounds memory whatever the community's
 * volume, and a join of thousands writes in a few calls, not in one (or more) per member. A join
 * of more users than this applies as many per call (see backfillJoins).
 */
export const BACKFILL_BATCH = 1_000;

/**
 * A join processed after posts that it precedes adds those posts to the member's tray
 * (docs/tray-engine.md#membership-by-time): the community's stored post events whose createdAt
 * falls in the membership span the join opened, applied to that member alone through
 * applyPersonalActivities, the path of a comment to one user, computed as a live fan-out would; the
 * span is the processing order's (spanOfJoin), so a leave stored since the join with a later place
 * (a concurrent leave job's) does not shorten it; then the kept actions on the community's
 * targets addressed to the member in that span, held back while they were away
 * (docs/tray-rules.md#leaving-and-rejoining-a-community). The events are read one UTC day at a time by
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
  options: GroupingOptions & { eventsRetentionDays: number },
): Promise<void> {
  const joins = changes.filter((change) => change.active);
  const now = (options.now ?? Date.now)();
  const oldest = now - Math.min(options.retentionDays, options.eventsRetentionDays) * DAY_MS;
  for (const communityId of new Set(joins.map((join) => join.communityId))) {
    const ofCommunity = joins.filter((change) => change.communityId === communityId);
    // The joiners' own spans: a few point reads, the community whole only for a join of many (a
    // read of every member on every join, each of a large community's joins read them all).
    const members = await membersSpans(db, communityId, new Set(ofCommunity.map((join) => join.userId)));
    // One event's joins share the days read and the events fetched (a join of many users at once).
    const posts = new CommunityPosts(db, communityId);
    // Read for all the joiners at once (a few queries, not one per member): after their joins
    // were stored, as a read per member was, so an action stored later sees the joins itself.
    const addressed = await readMembersActions(db, communityId, [
      ...new Set(ofCommunity.map((join) => join.userId)),
    ]);
    // The joiners' posts and addressed actions applied together, a batch at a time: a write per
    // member was a read of the group's actors, mutes and records per member. Each member's own
    // activities keep their order (posts, then addressed actions, each oldest first).
    // A call reads the spans of its recipients' community whole once they are many (membersSpans):
    // at least one joiner's worth of activities per call keeps those reads to about one per post,
    // not one per thousand activities, which grew with the square of the join's size.
    const batchSize = Math.max(BACKFILL_BATCH, addressed.size);
    let batch: Activity[] = [];
    const flush = async (below: number) => {
      if (batch.length < below) return;
      const full = batch;
      batch = [];
      await applyPersonalActivities(db, full, options);
    };
    for (const join of ofCommunity) {
      const span = spanOfJoin(members.get(join.userId)?.edges ?? [], join.at);
      if (!span) continue;
      const from = Math.max(span.from, oldest);
      // Tomorrow: a post dated a little ahead of the tray's clock (the platform's clock) still counts.
      const until = Math.min(span.to, now + DAY_MS);
      const due: PostKey[] = [];
      for (let day = Date.parse(dayOf(from)); day < until; day += DAY_MS) {
        for (const post of await posts.ofDay(dayOf(day)))
          if (post.activityAt >= from && post.activityAt < until) due.push(post);
      }
      due.sort((a, b) => a.activityAt - b.activityAt);
      for (const { _id } of due) {
        batch.push(...addressedTo(await posts.event(_id), join.userId));
        await flush(batchSize);
      }
      const actions = (addressed.get(join.userId) ?? [])
        .filter((action) => action.at >= from && action.at < until)
        .sort((a, b) => a.at - b.at);
      for (const action of actions) {
        batch.push(action);
        await flush(batchSize);
      }
    }
    await flush(1);
  }
}

interface PostKey {
  _id: string;
  activityAt: number;
}

/** A community's stored post events, read by day (`communityDay` equality) and by `_id`, each once. */
class CommunityPosts {
  private readonly days = new Map<string, PostKey[]>();
  private readonly events = new Map<string, Activity[]>();
  private readonly db: Db;
  private readonly communityId: string;

  constructor(db: Db, communityId: string) {
    this.db = db;
    this.communityId = communityId;
  }

  async ofDay(day: string): Promise<PostKey[]> {
    let keys = this.days.get(day);
    if (!keys) {
      const docs = await this.db
        .collection<EventDoc>(EVENTS)
        .find(
          { communityDay: communityDay(this.communityId, day) },
          { projection: { _id: 1, activityAt: 1 } },
        )
        .toArray();
      keys = docs.map((doc) => ({ _id: doc._id, activityAt: doc.activityAt ?? -Infinity }));
      this.days.set(day, keys);
    }
    return keys;
  }

  /** The event's community post activities (none if the event expired meanwhile). */
  async event(_id: string): Promise<Activity[]> {
    let activities = this.events.get(_id);
    if (!activities) {
      const event = await this.db.collection<EventDoc>(EVENTS).findOne({ _id });
      activities = event ? communityPostsOf(event, this.communityId) : [];
      this.events.set(_id, activities);
    }
    return activities;
  }
}

/**
 * The event's posts to the community: the activity stored with it, or for an event stored without
 * one (by versions before the storage port) the event mapped again.
 */
function communityPostsOf(event: EventDoc, communityId: string): Activity[] {
  if (event.postActivity) {
    const { audience } = event.postActivity;
    return audience.kind === 'community' && audience.communityId === communityId ? [event.postActivity] : [];
  }
  const mapped = mapEvent({
    event: event.event,
    data: payloadOf(event),
    receivedAt: event.receivedAt.getTime(),
  });
  return mapped.activities.filter(
    (activity) => activity.audience.kind === 'community' && activity.audience.communityId === communityId,
  );
}

/** A community post addressed to one member instead of the whole community. */
function addressedTo(activities: readonly Activity[], userId: string): Activity[] {
  return activities.map((activity) => ({ ...activity, audience: { kind: 'user' as const, userId } }));
}
