/**
 * The expected tray of an event sequence, written from the spec alone (docs/contract.md#event-catalogue
 * and docs/contract.md#tray-records), never from tray-service/worker: a bug in the product's grouping
 * shows up as a difference between the two. Deliberately simple: every action is collected, then
 * each record is computed from the set of its actions, so the result cannot depend on the order
 * in which a worker happened to process them.
 *
 * Modelled: comment.didCreate, reaction.didAdd, post.didCreate (its mentions, and on a community
 * a `post` record for every member at the post's createdAt), community.didJoin / didLeave by their
 * createdAt (docs/contract.md#communitydidjoin-communitydidleave: joined at or before the post and
 * not left between that join and the post; at an equal time the leave counts last), and
 * user.didGlobalBan / didGlobalUnban, which change no record: the banned users are reported apart
 * (bannedUsers) because their API calls answer 401. A join or leave without createdAt counts from
 * its receipt, which the model cannot know: it refuses one rather than guess. Every other event
 * name changes no record (docs/contract.md#events-that-are-only-stored).
 *
 * Leaving a community (docs/tray-rules.md#leaving-and-rejoining-a-community): a user gets nothing of
 * a community's targets (its posts, comments and reactions on them and on their comments, mentions
 * in them) from a leave until their next join, once the tray knows any join or leave of theirs
 * there; whatever order joins and actions arrive in. A leave processed after an action it covers
 * takes nothing back, an order this model does not follow: it holds for sequences whose leaves are
 * processed before what they cover (the bursts send leaves first). Each record is the set of the
 * actions that reached its recipient, so a `post` record names only who posted while the member
 * was there.
 */

export interface ModelEnvelope {
  readonly event: string;
  readonly data: unknown;
}

/** The compared fields of one record; every one is a function of the record's set of actions. */
export interface ModelRecord {
  /** v_tarid_uid = `${verb}_${targetId}_${userId}` (docs/contract.md#tray-records). */
  key: string;
  userId: string;
  verb: 'post' | 'comment' | 'mentreply' | 'reaction' | 'mentreact' | 'mention';
  targetId: string;
  targetType: 'post' | 'community';
  parentTargetId?: string;
  /** Distinct actors (`actorsCount`). */
  actorsCount: number;
  /** The 3 latest distinct actors, newest first (docs/contract.md#tray-records), by their latest action. */
  actorIds: string[];
  actorNames: string[];
  /** Fields of the newest action (`lastActionId`, `lastActionSegmentNo`, `lastUpdate`). */
  lastActionId: string;
  lastActionSegmentNo?: number;
  lastUpdate: number;
  /** Nobody read anything in these scenarios. */
  hasRead: boolean;
}

/** One action for one recipient: what a record is folded from. */
interface Action {
  recipient: string;
  verb: ModelRecord['verb'];
  targetId: string;
  parentTargetId?: string;
  actor: string;
  actorName: string;
  actionId: string;
  segment?: number;
  at: number;
  /** The community of the action's target; absent on a user feed. */
  communityId?: string;
}

// The payload paths the model reads (docs/contract.md#event-catalogue); the rest of a payload is ignored.
interface Profile {
  userId: string;
  displayName: string;
}
interface Mentionees {
  type: string;
  userIds: string[];
}
interface PostRef {
  postId: string;
  postedUserId: string;
  targetType: 'community' | 'user';
  targetId: string;
  createdAt?: string;
  mentionees?: Mentionees[] | null;
}
interface CommentData {
  comment: {
    commentId: string;
    userId: string;
    parentId?: string | null;
    segmentNumber?: number | null;
    createdAt: string;
    mentionees?: Mentionees[] | null;
  };
  post: PostRef;
  parentComment?: { userId: string } | null;
  community?: { communityId: string } | null;
  users?: Profile[];
}
interface ReactionData {
  reaction: {
    reactionId: string;
    userId: string;
    referenceType: 'post' | 'comment';
    referenceId: string;
    createdAt: string;
  };
  post: PostRef;
  comment?: { userId: string } | null;
  community?: { communityId: string } | null;
  users?: Profile[];
}
interface PostData {
  post: PostRef;
  community?: { communityId: string } | null;
  users?: Profile[];
}
interface MembershipData {
  community: { communityId: string };
  userIds: string[];
  createdAt?: string | null;
}
interface BanData {
  userIds: string[];
  createdAt: string;
}

const MAX_NAMED_ACTORS = 3; // docs/contract.md#limits

/** The expected records of the whole sequence, by key. */
export function referenceTray(envelopes: readonly ModelEnvelope[]): Map<string, ModelRecord> {
  const members = memberships(envelopes);
  const byKey = new Map<string, Action[]>();
  for (const action of envelopes.flatMap((envelope) => actionsOf(envelope, members))) {
    // docs/tray-engine.md#records: an author is never notified of their own action (the contract
    // says so for posts: "members except the author").
    if (action.actor === action.recipient) continue;
    // Nothing of a community's targets reaches a user while they are away from it.
    if (
      action.communityId !== undefined &&
      awayAt(members.get(`${action.communityId} ${action.recipient}`), action.at)
    )
      continue;
    const key = `${action.verb}_${action.targetId}_${action.recipient}`;
    byKey.set(key, [...(byKey.get(key) ?? []), action]);
  }
  return new Map([...byKey].map(([key, actions]) => [key, recordOf(key, actions)]));
}

/** Users whose newest global ban change (by createdAt; a ban wins a tie) is a ban. */
export function bannedUsers(envelopes: readonly ModelEnvelope[]): Set<string> {
  const newest = new Map<string, { at: number; banned: boolean }>();
  for (const envelope of envelopes) {
    if (envelope.event !== 'user.didGlobalBan' && envelope.event !== 'user.didGlobalUnban') continue;
    const data = envelope.data as BanData;
    const change = { at: Date.parse(data.createdAt), banned: envelope.event === 'user.didGlobalBan' };
    for (const userId of data.userIds) {
      const held = newest.get(userId);
      if (!held || change.at > held.at || (change.at === held.at && change.banned))
        newest.set(userId, change);
    }
  }
  return new Set([...newest].filter(([, change]) => change.banned).map(([userId]) => userId));
}

/** Each community's joins and leaves per user: `${communityId} ${userId}` -> changes. */
type Memberships = Map<string, { joined: boolean; at: number }[]>;

function memberships(envelopes: readonly ModelEnvelope[]): Memberships {
  const changes: Memberships = new Map();
  for (const envelope of envelopes) {
    if (envelope.event !== 'community.didJoin' && envelope.event !== 'community.didLeave') continue;
    const data = envelope.data as MembershipData;
    if (!data.createdAt) {
      throw new Error(
        'referenceTray: a join or leave without createdAt counts from its receipt, not modelled',
      );
    }
    for (const userId of data.userIds) {
      const key = `${data.community.communityId} ${userId}`;
      changes.set(key, [
        ...(changes.get(key) ?? []),
        { joined: envelope.event === 'community.didJoin', at: Date.parse(data.createdAt) },
      ]);
    }
  }
  return changes;
}

/**
 * Member at `at` (docs/contract.md#communitydidjoin-communitydidleave): the last change at or
 * before `at` is a join, a leave at the same time as a join counting after it. A repeated join
 * or leave changes nothing, so "the last change" decides.
 */
function memberAt(changes: readonly { joined: boolean; at: number }[], at: number): boolean {
  let last: { joined: boolean; at: number } | undefined;
  for (const change of changes) {
    if (change.at > at) continue;
    if (!last || change.at > last.at || (change.at === last.at && !change.joined)) last = change;
  }
  return last?.joined ?? false;
}

/**
 * Away at `at`: the tray knows a join or leave of the user there at or before it, and they are not
 * a member then (docs/tray-rules.md#leaving-and-rejoining-a-community).
 */
function awayAt(changes: readonly { joined: boolean; at: number }[] | undefined, at: number): boolean {
  return (changes ?? []).some((change) => change.at <= at) && !memberAt(changes ?? [], at);
}

function recordOf(key: string, actions: Action[]): ModelRecord {
  // Each distinct actor counts once, with their latest action (`actorsCount`, docs/contract.md#tray-records).
  const latestByActor = new Map<string, Action>();
  for (const action of actions) {
    const seen = latestByActor.get(action.actor);
    if (!seen || newer(action, seen)) latestByActor.set(action.actor, action);
  }
  const newestFirst = [...latestByActor.values()].sort((a, b) => (newer(a, b) ? -1 : 1));
  const newest = newestFirst[0]!;
  const named = newestFirst.slice(0, MAX_NAMED_ACTORS);
  return {
    key,
    userId: newest.recipient,
    verb: newest.verb,
    targetId: newest.targetId,
    targetType: newest.verb === 'post' ? 'community' : 'post',
    ...(newest.parentTargetId === undefined ? {} : { parentTargetId: newest.parentTargetId }),
    actorsCount: latestByActor.size,
    actorIds: named.map((action) => action.actor),
    actorNames: named.map((action) => action.actorName),
    lastActionId: newest.actionId,
    ...(newest.segment === undefined ? {} : { lastActionSegmentNo: newest.segment }),
    lastUpdate: newest.at,
    hasRead: false,
  };
}

/** Later time wins; equal times (the spec gives no rule) are ordered by action id. */
function newer(a: Action, b: Action): boolean {
  return a.at !== b.at ? a.at > b.at : a.actionId > b.actionId;
}

function actionsOf(envelope: ModelEnvelope, members: Memberships): Action[] {
  switch (envelope.event) {
    case 'comment.didCreate':
      return commentActions(envelope.data as CommentData);
    case 'reaction.didAdd':
      return reactionActions(envelope.data as ReactionData);
    case 'post.didCreate':
      return postActions(envelope.data as PostData, members);
    default:
      return [];
  }
}

// docs/contract.md#commentdidcreate: a top-level comment is a `comment` on the post for its author
// (parent = the post's targetId: community id or feed owner); a reply is a `mentreply` on the
// parent comment for that comment's author (parent = the post). segmentNumber is the comment's
// index (lastActionSegmentNo, "supported only for comments", 2.1).
function commentActions(data: CommentData): Action[] {
  const { comment, post } = data;
  const common = {
    actor: comment.userId,
    actorName: nameOf(comment.userId, data.users),
    actionId: comment.commentId,
    at: Date.parse(comment.createdAt),
    ...communityOf(post, data.community),
  };
  const segment = comment.segmentNumber ?? undefined;
  const own: Action = comment.parentId
    ? {
        ...common,
        verb: 'mentreply',
        recipient: data.parentComment!.userId,
        targetId: comment.parentId,
        parentTargetId: post.postId,
      }
    : {
        ...common,
        verb: 'comment',
        recipient: post.postedUserId,
        targetId: post.postId,
        parentTargetId: post.targetId,
      };
  if (segment !== undefined) own.segment = segment;
  // Mentions: one record per mentioned user, target the comment, parent the post (docs/contract.md#record-fields-per-verb).
  const mentions = mentioned(comment.mentionees).map((userId): Action => ({
    ...common,
    verb: 'mention',
    recipient: userId,
    targetId: comment.commentId,
    parentTargetId: post.postId,
  }));
  return [own, ...mentions];
}

// docs/contract.md#reactiondidadd: on a post a `reaction` for the post's author (parent = the post's
// targetId); on a comment a `mentreact` for the comment's author (parent = the post).
function reactionActions(data: ReactionData): Action[] {
  const { reaction, post } = data;
  const common = {
    actor: reaction.userId,
    actorName: nameOf(reaction.userId, data.users),
    actionId: reaction.reactionId,
    at: Date.parse(reaction.createdAt),
    ...communityOf(post, data.community),
  };
  if (reaction.referenceType === 'post') {
    return [
      {
        ...common,
        verb: 'reaction',
        recipient: post.postedUserId,
        targetId: post.postId,
        parentTargetId: post.targetId,
      },
    ];
  }
  return [
    {
      ...common,
      verb: 'mentreact',
      recipient: data.comment!.userId,
      targetId: reaction.referenceId,
      parentTargetId: post.postId,
    },
  ];
}

// docs/contract.md#postdidcreate: a post on a user feed makes no `post` record; each mentioned
// user gets a `mention` with the post as target and no parent.
function postActions(data: PostData, members: Memberships): Action[] {
  const { post } = data;
  const at = Date.parse(post.createdAt ?? '');
  const common = {
    actor: post.postedUserId,
    actorName: nameOf(post.postedUserId, data.users),
    actionId: post.postId,
    at,
    ...communityOf(post, data.community),
  };
  // docs/contract.md#postdidcreate: in a community, a `post` record (target the community, no
  // parent) for every member at the post's createdAt.
  const fanOut: Action[] = [];
  if (post.targetType === 'community') {
    for (const [key, changes] of members) {
      const [communityId, userId] = key.split(' ') as [string, string];
      if (communityId === post.targetId && memberAt(changes, at))
        fanOut.push({ ...common, verb: 'post', recipient: userId, targetId: communityId });
    }
  }
  return [
    ...fanOut,
    ...mentioned(post.mentionees).map((userId): Action => ({
      ...common,
      verb: 'mention',
      recipient: userId,
      targetId: post.postId,
    })),
  ];
}

/** The community a post's targets belong to (docs/contract.md#event-catalogue: `community` on a community's post). */
function communityOf(
  post: PostRef,
  community: { communityId: string } | null | undefined,
): { communityId?: string } {
  return post.targetType === 'community' ? { communityId: community?.communityId ?? post.targetId } : {};
}

function mentioned(list: Mentionees[] | null | undefined): string[] {
  return [...new Set((list ?? []).filter((m) => m.type === 'user').flatMap((m) => m.userIds))];
}

/** The actor's name as the event's `users` shows it (docs/contract.md#userdidupdate-userdiddelete: as they were when they acted). */
function nameOf(userId: string, users: Profile[] | undefined): string {
  return users?.find((user) => user.userId === userId)?.displayName ?? userId;
}
