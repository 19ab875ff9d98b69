import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import { heldBackByMutes, muteTargetsCovering, type Mute } from '../../../domain/mute.ts';
import { TRAY_MUTES } from '../collections/collection-names.ts';
import { muteTargetKey, type MuteDoc } from '../collections/tray-mutes-collection.ts';

/**
 * Up to this many recipients, the spans are read for those recipients only (`userId` beside
 * `target`): a comment's one recipient does not read the thousands of spans other users keep on a
 * community they muted.
 */
export const FEW_RECIPIENTS = 1_000;

/**
 * Past this many targets the spans are read by owner alone (`mute_user`) and matched to the targets
 * here: a community's post record counts every post it kept (90 days of them), so a `$in` of their
 * targets grows with the community's history, towards the 16 MiB a command may hold.
 */
export const MANY_TARGETS = 1_000;

/**
 * Recipients per query when the spans are read by owner: a removal's recomputation reads a
 * community's post records, one per member, and one `$in` of them all would grow with the
 * community towards the 16 MiB a command may hold (ids are at most 128 characters: under 2 MiB).
 */
export const OWNERS_PER_QUERY = 10_000;

/**
 * The mute spans of `recipients` on every target that could cover one of the actions (their
 * authors, posts and communities) and on the users `actors` (the other actors their records count),
 * by owner, ended spans included (docs/storage.md#the-inbox): one `$in` per write or fan-out batch,
 * never one query per recipient. MongoDB has no join to do it inside the write. A fan-out batch
 * (thousands of recipients) reads by target, the read the size of the mutes on those targets
 * whatever the audience's size; a write to few recipients, or one on many targets, reads by owner
 * (FEW_RECIPIENTS, MANY_TARGETS; a removal's recomputation of a community's post records, by owner,
 * OWNERS_PER_QUERY at a time). Each delivery is then judged by its activity's time like
 * membership.
 */
export async function spansCovering(
  db: Db,
  actions: readonly Activity[],
  recipients: ReadonlySet<string>,
  actors: Iterable<string> = [],
): Promise<Map<string, Mute[]>> {
  const targets = new Set<string>();
  for (const activity of actions)
    for (const { targetType, targetId } of muteTargetsCovering(activity))
      targets.add(muteTargetKey(targetType, targetId));
  for (const actor of actors) targets.add(muteTargetKey('user', actor));
  const byOwner = new Map<string, Mute[]>();
  if (targets.size === 0 || recipients.size === 0) return byOwner;
  const mutes = db.collection<MuteDoc>(TRAY_MUTES);
  const onTargets = { target: { $in: [...targets] } };
  const found: MuteDoc[] = [];
  if (targets.size > MANY_TARGETS) {
    const owners = [...recipients];
    for (let start = 0; start < owners.length; start += OWNERS_PER_QUERY)
      found.push(
        ...(await mutes.find({ userId: { $in: owners.slice(start, start + OWNERS_PER_QUERY) } }).toArray()),
      );
  } else {
    const filter =
      recipients.size <= FEW_RECIPIENTS ? { ...onTargets, userId: { $in: [...recipients] } } : onTargets;
    found.push(...(await mutes.find(filter).toArray()));
  }
  for (const mute of found)
    if (recipients.has(mute.userId) && targets.has(mute.target))
      byOwner.set(mute.userId, [...(byOwner.get(mute.userId) ?? []), mute]);
  return byOwner;
}

/**
 * Every mute span of one user, ended ones included (`mute_user`): a recomputation of that user's
 * records (a join or leave a write missed) counts none of what they held back.
 */
export async function spansOfUser(db: Db, userId: string): Promise<Mute[]> {
  return db.collection<MuteDoc>(TRAY_MUTES).find({ userId }).toArray();
}

/** The actions no span of the recipient held back: what their records may count. Pure. */
export function notHeldBack<A extends Activity>(actions: readonly A[], spans: readonly Mute[]): A[] {
  return spans.length === 0 ? [...actions] : actions.filter((action) => !heldBackByMutes(spans, action));
}
