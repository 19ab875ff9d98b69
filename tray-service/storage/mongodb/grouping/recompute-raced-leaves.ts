import type { Db } from 'mongodb';
import { TRAY_TARGET_ACTIONS } from '../collections/collection-names.ts';
import { WHOLE_GROUP } from '../driver/whole-group.ts';
import { MEMBER_POINT_READS, type PlacedChange } from '../memberships/membership-changes.ts';
import { recordGroup } from '../records/storage-keys.ts';
import { recomputeMemberRecords, recomputeOptionsOf } from './recompute-member-records.ts';
import { memberKey } from './target-actions.ts';
import type { TargetActionDoc } from '../collections/tray-target-actions-collection.ts';
import type { GroupingOptions } from './write-deliveries.ts';

/** Members per `$in` when a leave batch names more than MEMBER_POINT_READS of one community. */
const MEMBERS_PER_QUERY = 1_000;

type Placed = Pick<TargetActionDoc, 'processed' | 'at' | 'member'>;

/**
 * A leave takes its place in the processing order before it is stored, so an action kept in
 * between (a place after the leave's and before its `storedBy`: leavesStoredBy) may have been
 * counted without it: its write read the memberships, and checked them again after writing, before
 * the leave was there. By the places the leave came first and holds back what it covers, as every
 * later computation of those records judges (docs/tray-rules.md#leaving-and-rejoining-a-community);
 * so once its leaves are stored, the job computes again, by the places, the records of each leaver
 * for whom a kept action of the community (a post, or one addressed to them) has a place in one of
 * their leaves' windows and is dated at or after it (recomputeMemberRecords). A write after the
 * window saw the leave, so a leave delivered again computes nothing for it. That takes out exactly
 * the raced actions, before anyone has computed the records from those places; a write still
 * running when the leave was stored sees it in its own check after writing. The normal case costs
 * the look-up only: a post of the community by `group` and place (`action_group_processed`), an
 * addressed one by `member`.
 */
export async function recomputeRacedLeaves(
  db: Db,
  changes: readonly PlacedChange[],
  options: GroupingOptions,
): Promise<void> {
  const leaves = changes.filter((change) => !change.active);
  for (const communityId of new Set(leaves.map((leave) => leave.communityId))) {
    const ofCommunity = leaves.filter((leave) => leave.communityId === communityId);
    const after = {
      processed: {
        $gt: Math.min(...ofCommunity.map((leave) => leave.processed)),
        $lt: Math.max(...ofCommunity.map(storedByOf)),
      },
      at: { $gte: Math.min(...ofCommunity.map((leave) => leave.at)) },
    };
    const posts = await keptActions(db, { group: recordGroup('post', communityId), ...after });
    const addressed = await addressedTo(
      db,
      [...new Set(ofCommunity.map((leave) => memberKey(communityId, leave.userId)))],
      after,
    );
    const covered = (action: Placed, leave: PlacedChange) =>
      (action.processed ?? 0) > leave.processed &&
      (action.processed ?? 0) < storedByOf(leave) &&
      action.at >= leave.at;
    for (const userId of new Set(ofCommunity.map((leave) => leave.userId))) {
      const member = memberKey(communityId, userId);
      const theirs = [...posts, ...addressed.filter((action) => action.member === member)];
      const raced = ofCommunity.some(
        (leave) => leave.userId === userId && theirs.some((action) => covered(action, leave)),
      );
      if (!raced) continue;
      // A record the raced write made and told written, now left with no action: told removed.
      await recomputeMemberRecords(db, communityId, userId, recomputeOptionsOf(options));
    }
  }
}

/** The end of the leave's window (leavesStoredBy); without one, every later place. */
const storedByOf = (leave: PlacedChange) => leave.storedBy ?? Number.MAX_SAFE_INTEGER;

function keptActions(db: Db, filter: Record<string, unknown>): Promise<Placed[]> {
  return db
    .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
    .find(filter, { projection: { _id: 0, processed: 1, at: 1, member: 1 }, batchSize: WHOLE_GROUP })
    .toArray();
}

/**
 * The kept actions addressed to `members` (memberKey) matching `after`: by equality on `member`
 * one by one when they are few (FerretDB pushes only equality down), else by `$in` in chunks.
 */
async function addressedTo(
  db: Db,
  members: readonly string[],
  after: Record<string, unknown>,
): Promise<Placed[]> {
  const found: Placed[] = [];
  if (members.length <= MEMBER_POINT_READS) {
    for (const member of members) found.push(...(await keptActions(db, { member, ...after })));
    return found;
  }
  for (let start = 0; start < members.length; start += MEMBERS_PER_QUERY)
    found.push(
      ...(await keptActions(db, {
        member: { $in: members.slice(start, start + MEMBERS_PER_QUERY) },
        ...after,
      })),
    );
  return found;
}
