import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { MEMBERSHIPS, MEMBERSHIP_CHANGES } from '../collections/collection-names.ts';
import { membershipId, type MembershipDoc } from '../collections/memberships-collection.ts';
import {
  awaySpans,
  membershipIntervals,
  prunableChanges,
  pruneCutoff,
  type MembershipEdge,
  type MembershipInterval,
} from '../../../domain/membership-intervals.ts';
import type { MembershipChange } from '../../../domain/activity.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';
import { WHOLE_GROUP } from '../driver/whole-group.ts';
import type { MembershipChangeDoc } from '../collections/membership-changes-collection.ts';
import { nextProcessed, storedPlaces } from './processing-order.ts';
import { leavesStoredBy } from './leaves-stored-by.ts';
import { oldestCountFrom } from '../records/oldest-count-from.ts';

const memberKey = (communityId: string, userId: string) => JSON.stringify([communityId, userId]);

const changeDoc = (
  change: MembershipChange,
  processed: number,
  processedAt: number,
): MembershipChangeDoc => ({
  _id: JSON.stringify([change.communityId, change.userId, change.at, change.active]),
  communityId: change.communityId,
  userId: change.userId,
  member: memberKey(change.communityId, change.userId),
  joined: change.active,
  at: change.at,
  processed,
  processedAt,
});

/**
 * A stored change as the fold, awayFor and the prune take it (one stored before the order was
 * kept: 0).
 */
const edgeOf = (
  change: Pick<MembershipChangeDoc, 'joined' | 'at' | 'processed' | 'processedAt'>,
): MembershipEdge => ({
  joined: change.joined,
  at: change.at,
  processed: change.processed ?? 0,
  ...(change.processedAt === undefined ? {} : { processedAt: change.processedAt }),
});

/**
 * Stores joins and leaves so that the membership is the same whatever order they arrive in
 * (docs/tray-engine.md#membership-by-time). FerretDB's updates are not atomic under concurrency
 * (two conditional upserts can both pass their filter and the older one win), so a membership is
 * never updated in place: each change is an insert with a unique `_id`, the one write FerretDB
 * performs atomically, and readers fold a member's changes into intervals. A member's changes
 * older than the tray's retention and than every countFrom of the user's records (pruneCutoff)
 * that decide nothing any more (prunableChanges) are pruned: posts that old make no record, and
 * no record counts them.
 */
export async function applyMembershipChanges(
  db: Db,
  changes: readonly MembershipChange[],
  options: {
    retentionDays: number;
    now?: number;
    /** The first of the changes' places, when the caller took them (nextProcessed); else taken here. */
    first?: number;
  },
): Promise<PlacedChange[]> {
  if (changes.length === 0) return [];
  const collection = db.collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES);
  // Their places in the processing order (a redelivery's duplicate keeps the first one's).
  const first = options.first ?? (await nextProcessed(db, changes.length));
  const now = options.now ?? Date.now();
  const docs = changes.map((change, index) => changeDoc(change, first + index, now));
  const duplicates = await ignoreDuplicates(collection.insertMany(docs, { ordered: false }));
  // A redelivered change keeps the place it took first, as its place decides what it covers.
  const places = new Map(docs.map((doc) => [doc._id, doc.processed ?? 0]));
  const ids = duplicates.map((index) => (docs[index] as MembershipChangeDoc)._id);
  for (const [id, place] of await storedPlaces(db, MEMBERSHIP_CHANGES, ids)) places.set(id, place ?? 0);
  const storedBy = await leavesStoredBy(
    db,
    docs.filter((doc) => !doc.joined).map((doc) => doc._id),
  );
  const cutoff = now - options.retentionDays * DAY_MS;
  const byCommunity = new Map<string, Set<string>>();
  const userOf = new Map(docs.map((doc) => [doc.member, doc.userId]));
  for (const doc of docs)
    byCommunity.set(doc.communityId, (byCommunity.get(doc.communityId) ?? new Set()).add(doc.member));
  for (const [communityId, members] of byCommunity) {
    for (const [member, list] of await changesOfMembers(db, communityId, members)) {
      // The user's records are read only when the retention alone would prune something.
      if (prunableChanges(list, cutoff).length === 0) continue;
      const oldest = await oldestCountFrom(db, userOf.get(member) ?? '');
      const prunable = prunableChanges(list, pruneCutoff(cutoff, oldest));
      if (prunable.length > 0)
        await collection.deleteMany({ _id: { $in: prunable.map((change) => change._id) } });
    }
  }
  return changes.map((change, index) => {
    const { _id } = docs[index] as MembershipChangeDoc;
    const bound = storedBy.get(_id);
    return {
      ...change,
      processed: places.get(_id) ?? first + index,
      ...(bound === undefined ? {} : { storedBy: bound }),
    };
  });
}

/**
 * A join or leave as stored, with its place in the processing order (a redelivered one its first)
 * and, for a leave, a place taken after it was stored (leavesStoredBy).
 */
export type PlacedChange = MembershipChange & { processed: number; storedBy?: number };

/**
 * Members of one community read one by one up to this many; more are read with the whole
 * community by equality on communityId. FerretDB answers each point query by scanning the whole
 * collection, so a read per member of a join or mention naming thousands was quadratic; one read of
 * the community is one scan, and a community holds at least the members an event names.
 */
export const MEMBER_POINT_READS = 16;

/** A stored change as the prune takes it: its edge and its `_id`. */
type StoredChange = MembershipEdge & { _id: string };

const storedChangeProjection = { _id: 1, member: 1, joined: 1, at: 1, processed: 1, processedAt: 1 } as const;

/** The stored changes of `members` (memberKey) of one community, by member; a member with none has no entry. */
async function changesOfMembers(
  db: Db,
  communityId: string,
  members: ReadonlySet<string>,
): Promise<Map<string, StoredChange[]>> {
  const collection = db.collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES);
  const byMember = new Map<string, StoredChange[]>();
  const add = (
    doc: Pick<MembershipChangeDoc, '_id' | 'member' | 'joined' | 'at' | 'processed' | 'processedAt'>,
  ) => {
    let list = byMember.get(doc.member);
    if (!list) byMember.set(doc.member, (list = []));
    list.push({ ...edgeOf(doc), _id: doc._id });
  };
  if (members.size <= MEMBER_POINT_READS) {
    // By equality on `member`: a join to a community of thousands reads only the changes of the one who joined.
    for (const member of members) {
      for (const doc of await collection.find({ member }, { projection: storedChangeProjection }).toArray())
        add(doc);
    }
    return byMember;
  }
  const all = await collection
    .find({ communityId }, { projection: storedChangeProjection, batchSize: WHOLE_GROUP })
    .toArray();
  for (const doc of all) if (members.has(doc.member)) add(doc);
  return byMember;
}

/** A user's membership in one community: their intervals and their away spans (awaySpans). */
export interface MemberSpans {
  intervals: MembershipInterval[];
  away: MembershipInterval[];
  /** The changes they were folded from, with their places in the processing order (awayFor). */
  edges: MembershipEdge[];
  /** The ids of the stored changes they were folded from, sorted (memberChangesFingerprint). */
  changes?: string;
}

/**
 * Each user's membership intervals in one community: the stored changes plus the imported
 * memberships (community_members, written by `npm run import-members`: importedEdges), each read
 * by equality on communityId (one index lookup on FerretDB, which pushes nothing else down).
 */
export async function communityIntervals(
  db: Db,
  communityId: string,
): Promise<Map<string, MembershipInterval[]>> {
  const members = await communityMembers(db, communityId);
  return new Map([...members].map(([userId, spans]) => [userId, spans.intervals]));
}

/** Each user's intervals and away spans in one community (see communityIntervals). */
export async function communityMembers(db: Db, communityId: string): Promise<Map<string, MemberSpans>> {
  const [changes, imported] = await Promise.all([
    db
      .collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES)
      .find(
        { communityId },
        {
          projection: { _id: 1, userId: 1, joined: 1, at: 1, processed: 1, processedAt: 1 },
          batchSize: WHOLE_GROUP,
        },
      )
      .toArray(),
    db
      .collection<MembershipDoc>(MEMBERSHIPS)
      .find(
        { communityId },
        {
          projection: { _id: 0, userId: 1, active: 1, since: 1, updatedAt: 1, asOf: 1 },
          batchSize: WHOLE_GROUP,
        },
      )
      .toArray(),
  ]);
  const edges = new Map<string, MembershipEdge[]>();
  const add = (userId: string, edge: MembershipEdge) => {
    const list = edges.get(userId);
    if (list) list.push(edge);
    else edges.set(userId, [edge]);
  };
  for (const change of changes) add(change.userId, edgeOf(change));
  for (const member of imported) for (const edge of importedEdges(member)) add(member.userId, edge);
  const ids = changeIdsByUser(changes);
  return new Map(
    [...edges].map(([userId, list]) => [userId, { ...spansOf(list), changes: ids.get(userId) ?? '' }]),
  );
}

/**
 * The stored joins and leaves of a community's users (by equality on communityId), as one
 * fingerprint per user: a fan-out that read the members checks, after writing, which of them
 * changed meanwhile (imports are not changes: they come from the operator's list, not from events).
 */
export async function communityChangesFingerprints(
  db: Db,
  communityId: string,
): Promise<Map<string, string>> {
  const changes = await db
    .collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES)
    .find({ communityId }, { projection: { _id: 1, userId: 1 }, batchSize: WHOLE_GROUP })
    .toArray();
  return changeIdsByUser(changes);
}

function changeIdsByUser(
  changes: readonly Pick<MembershipChangeDoc, '_id' | 'userId'>[],
): Map<string, string> {
  const byUser = new Map<string, string[]>();
  for (const change of changes) {
    const ids = byUser.get(change.userId);
    if (ids) ids.push(change._id);
    else byUser.set(change.userId, [change._id]);
  }
  return new Map([...byUser].map(([userId, ids]) => [userId, ids.sort().join('\n')]));
}

/**
 * One user's intervals and away spans in one community: their changes by equality on `member`,
 * their imported membership by `_id`. What a personal write on the community's targets checks.
 */
export async function memberSpans(db: Db, communityId: string, userId: string): Promise<MemberSpans> {
  const [changes, imported] = await Promise.all([
    db
      .collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES)
      .find(
        { member: memberKey(communityId, userId) },
        { projection: { _id: 1, joined: 1, at: 1, processed: 1, processedAt: 1 } },
      )
      .toArray(),
    db.collection<MembershipDoc>(MEMBERSHIPS).findOne({ _id: membershipId(communityId, userId) }),
  ]);
  return {
    ...spansOf([...changes.map(edgeOf), ...(imported ? importedEdges(imported) : [])]),
    changes: changes
      .map((change) => change._id)
      .sort()
      .join('\n'),
  };
}

/**
 * The spans of several users of one community, by user (memberSpans for each): read one by one
 * when they are few, else with the whole community (communityMembers; see MEMBER_POINT_READS).
 */
export function membersSpans(
  db: Db,
  communityId: string,
  userIds: ReadonlySet<string>,
): Promise<Map<string, MemberSpans>> {
  return ofMembers(
    userIds,
    (userId) => memberSpans(db, communityId, userId),
    () => communityMembers(db, communityId),
    () => ({ ...spansOf([]), changes: '' }),
  );
}

/**
 * The fingerprints of several users' changes in one community, by user (memberChangesFingerprint
 * for each): read one by one when they are few, else with the whole community (MEMBER_POINT_READS).
 */
export function membersChangesFingerprints(
  db: Db,
  communityId: string,
  userIds: ReadonlySet<string>,
): Promise<Map<string, string>> {
  return ofMembers(
    userIds,
    (userId) => memberChangesFingerprint(db, communityId, userId),
    () => communityChangesFingerprints(db, communityId),
    () => '',
  );
}

/** `one` for each of a few users, else `whole` read once; `none()` for a user the community lacks. */
async function ofMembers<T>(
  userIds: ReadonlySet<string>,
  one: (userId: string) => Promise<T>,
  whole: () => Promise<Map<string, T>>,
  none: () => T,
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  if (userIds.size <= MEMBER_POINT_READS) {
    for (const userId of userIds) found.set(userId, await one(userId));
    return found;
  }
  const community = await whole();
  for (const userId of userIds) found.set(userId, community.get(userId) ?? none());
  return found;
}

/**
 * The stored joins and leaves of one user in one community (by equality on `member`), as a
 * fingerprint: a writer that read a member's spans checks, after writing, that no change came
 * meanwhile (imports are not changes: they come from the operator's list, not from events).
 */
export async function memberChangesFingerprint(db: Db, communityId: string, userId: string): Promise<string> {
  const changes = await db
    .collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES)
    .find({ member: memberKey(communityId, userId) }, { projection: { _id: 1 } })
    .toArray();
  return changes
    .map((change) => change._id)
    .sort()
    .join('\n');
}

/**
 * An imported member is one as of each list's time that named them (`asOf`), a join processed
 * before everything: a leave stored before it is overridden, one after it stands (npm run
 * import-members' rule). Also a join at `since`, and a join or a leave at `updatedAt` as `active`
 * says: the first list's time, or on a document from before lists kept their times, the one
 * list's time or the latest join or leave applied then.
 */
export function importedEdges(
  member: Pick<MembershipDoc, 'since' | 'active' | 'updatedAt' | 'asOf'>,
): MembershipEdge[] {
  return [
    { joined: true, at: member.since },
    { joined: member.active, at: member.updatedAt },
    ...(member.asOf ?? []).map((at) => ({ joined: true, at })),
  ];
}

function spansOf(edges: readonly MembershipEdge[]): MemberSpans {
  return { intervals: membershipIntervals(edges), away: awaySpans(edges), edges: [...edges] };
}

/** A deleted user leaves every community they belong to, so post fan-outs stop at `at`. */
export async function endMemberships(
  db: Db,
  userIds: readonly string[],
  at: number,
  /** When the deletion is processed (its leaves' processing time). */
  processedAt: number,
): Promise<void> {
  const leaves: MembershipChange[] = [];
  for (const userId of userIds) {
    const [changes, imported] = await Promise.all([
      db
        .collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES)
        .find({ userId }, { projection: { _id: 0, communityId: 1 } })
        .toArray(),
      db
        .collection<MembershipDoc>(MEMBERSHIPS)
        .find({ userId }, { projection: { _id: 0, communityId: 1 } })
        .toArray(),
    ]);
    const communities = new Set([...changes, ...imported].map((doc) => doc.communityId));
    for (const communityId of communities) leaves.push({ communityId, userId, active: false, at });
  }
  if (leaves.length === 0) return;
  const first = await nextProcessed(db, leaves.length);
  await ignoreDuplicates(
    db.collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES).insertMany(
      leaves.map((leave, index) => changeDoc(leave, first + index, processedAt)),
      { ordered: false },
    ),
  );
}
