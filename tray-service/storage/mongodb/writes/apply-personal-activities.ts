import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import { withDeletedActors } from '../../../domain/deleted-user.ts';
import { deletedAmong } from '../grouping/deleted-users.ts';
import { membersChangesFingerprints, type MemberSpans } from '../memberships/membership-changes.ts';
import { recomputeMemberRecords, recomputeOptionsOf } from '../grouping/recompute-member-records.ts';
import { reapplyRemovals } from '../removals/reapply-removals.ts';
import { withoutVoided } from '../removals/tombstones.ts';
import { reapplyToVoided } from '../removals/reapply-to-voided.ts';
import { reapplyDeletions } from '../grouping/reapply-deletions.ts';
import {
  recordActions,
  writeDeliveries,
  type Delivery,
  type GroupingOptions,
} from '../grouping/write-deliveries.ts';

/**
 * Adds each activity's action to its record group's actors (kept once per target, whatever the
 * audience), then regroups the records of the activities addressed to one user. Community posts
 * get their actors here too; their records are written by fanOutCommunityPosts. On a community's
 * targets the recipient's away spans are read in each compare-and-set round and once more after
 * the writes: a join or leave stored since the first round's read is then applied to the member's
 * records here (recomputeMemberRecords), by the processing order: a leave whose place is before
 * this write's actions, which the write did not see, holds them back after all; one after them
 * takes nothing back (docs/tray-rules.md#leaving-and-rejoining-a-community). An activity a kept removal voids is a no-op (docs/tray-rules.md#inbox), and a
 * removal stored while the write ran is applied again after it (reapplyRemovals). Nothing reaches a
 * deleted user and their actions show them deleted; a deletion stored while the write ran is applied
 * again after it (reapplyDeletions).
 */
export async function applyPersonalActivities(
  db: Db,
  all: readonly Activity[],
  options: GroupingOptions,
): Promise<void> {
  const { live, seen } = await withoutVoided(db, all);
  await reapplyToVoided(db, all, live, options);
  // A deleted user receives nothing, and an action of theirs shows them deleted
  // (docs/tray-rules.md#deleted-users): one look-up of the actors and recipients.
  const deleted = await deletedAmong(db, [
    ...live.map((activity) => activity.actor.userId),
    ...live.flatMap((activity) => (activity.audience.kind === 'user' ? [activity.audience.userId] : [])),
  ]);
  // Each with its place in the processing order (a redelivered one its first): what away is judged by.
  const activities = await recordActions(db, withDeletedActors(live, deleted), options.retentionDays);
  // An author is never notified of their own action.
  const addressed: Delivery[] = activities.flatMap((activity) =>
    activity.audience.kind === 'user' &&
    activity.audience.userId !== activity.actor.userId &&
    !deleted.has(activity.audience.userId)
      ? [{ recipientId: activity.audience.userId, activity }]
      : [],
  );
  // A delivery a mute of its recipient holds back makes no record and changes none (writeDeliveries).
  const written = await writeDeliveries(db, addressed, options);
  // The members' changes read again a community at a time (membersChangesFingerprints): a
  // mention of thousands checks them in one query, not one per member.
  const byCommunity = new Map<string, Map<string, MemberSpans>>();
  for (const [member, spans] of written.spans) {
    const [communityId, userId] = JSON.parse(member) as [string, string];
    byCommunity.set(communityId, (byCommunity.get(communityId) ?? new Map()).set(userId, spans));
  }
  for (const [communityId, members] of byCommunity) {
    const current = await membersChangesFingerprints(db, communityId, new Set(members.keys()));
    for (const [userId, spans] of members) {
      if (current.get(userId) === spans.changes) continue;
      // A record this write made that the leave then left with nothing was told written: now removed.
      await recomputeMemberRecords(db, communityId, userId, recomputeOptionsOf(options));
    }
  }
  await reapplyRemovals(db, activities, options, seen);
  // A deletion stored while this ran: of a recipient it wrote a record for, of an actor whose
  // action it kept or whom a record it wrote names as they were.
  await reapplyDeletions(
    db,
    new Set([
      ...written.recipients,
      ...written.named,
      ...activities.flatMap((activity) =>
        deleted.has(activity.actor.userId) ? [] : [activity.actor.userId],
      ),
    ]),
    options,
  );
}
