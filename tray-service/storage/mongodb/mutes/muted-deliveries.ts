import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import { activityPost } from '../../../domain/activity-post.ts';
import { heldBackByMutes, type Mute, type MuteTargetType } from '../../../domain/mute.ts';
import { TRAY_MUTES } from '../collection-names.ts';
import { muteTargetKey, type MuteDoc } from './tray-mutes-collection.ts';

/** The targets a mute of which could cover the activity (domain/mute.ts muteCovers). */
function coveringTargets(activity: Activity): [MuteTargetType, string][] {
  const post = activityPost(activity);
  return [
    ['user', activity.actor.userId],
    ...(post === undefined ? [] : [['post', post] as [MuteTargetType, string]]),
    ...(activity.communityId === undefined
      ? []
      : [['community', activity.communityId] as [MuteTargetType, string]]),
  ];
}

/**
 * The deliveries no mute of their recipient holds back (docs/storage.md#the-inbox): one query per
 * batch reads the mutes of every target that could cover its activities (their authors, posts and
 * communities: three for a post's fan-out) by `$in` on `mute_target`, never one per member, and
 * each delivery is judged by its activity's time like membership, ended spans included. MongoDB
 * has no join to do it inside the write; reading by target keeps the read the size of the mutes
 * on those targets whatever the audience's size. Also answers the recipients' spans it read,
 * so their records are counted without what the spans held back (writeDeliveries).
 */
export async function withoutMuted<D extends { recipientId: string; activity: Activity }>(
  db: Db,
  deliveries: readonly D[],
): Promise<{ deliveries: D[]; mutes: Map<string, Mute[]> }> {
  if (deliveries.length === 0) return { deliveries: [], mutes: new Map() };
  const recipients = new Set(deliveries.map(({ recipientId }) => recipientId));
  const targets = new Set<string>();
  for (const { activity } of deliveries)
    for (const [type, id] of coveringTargets(activity)) targets.add(muteTargetKey(type, id));
  const byOwner = new Map<string, Mute[]>();
  const found = await db
    .collection<MuteDoc>(TRAY_MUTES)
    .find({ target: { $in: [...targets] } })
    .toArray();
  for (const mute of found)
    if (recipients.has(mute.userId)) byOwner.set(mute.userId, [...(byOwner.get(mute.userId) ?? []), mute]);
  if (byOwner.size === 0) return { deliveries: [...deliveries], mutes: byOwner };
  return {
    deliveries: deliveries.filter(
      ({ recipientId, activity }) => !heldBackByMutes(byOwner.get(recipientId) ?? [], activity),
    ),
    // The recipients' spans on these targets: their records count none of what the spans held back.
    mutes: byOwner,
  };
}
