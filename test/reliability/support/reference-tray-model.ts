/**
 * The expected tray of an event sequence, written from the spec alone (docs/contract.md#event-catalogue
 * and docs/contract.md#tray-records), never from tray-service/worker: a bug in the product's grouping
 * shows up as a difference between the two. Deliberately simple: every action is collected, then
 * each record is computed from the set of its actions, so the result cannot depend on the order
 * in which a worker happened to process them.
 *
 * Modelled: comment.didCreate, reaction.didAdd, post.didCreate on a user feed (its mentions).
 * A community post fans out to members, which depends on when joins were processed (docs/contract.md#communitydidjoin-communitydidleave); the
 * model refuses it rather than guess. Every other event name changes no record (docs/contract.md#events-that-are-only-stored).
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
  verb: 'comment' | 'mentreply' | 'reaction' | 'mentreact' | 'mention';
  targetId: string;
  targetType: 'post';
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
  users?: Profile[];
}
interface PostData {
  post: PostRef;
  users?: Profile[];
}

const MAX_NAMED_ACTORS = 3; // docs/contract.md#limits

/** The expected records of the whole sequence, by key. */
export function referenceTray(envelopes: readonly ModelEnvelope[]): Map<string, ModelRecord> {
  const byKey = new Map<string, Action[]>();
  for (const action of envelopes.flatMap(actionsOf)) {
    // docs/tray-engine.md#records: an author is never notified of their own action (the contract
    // says so for posts: "members except the author").
    if (action.actor === action.recipient) continue;
    const key = `${action.verb}_${action.targetId}_${action.recipient}`;
    byKey.set(key, [...(byKey.get(key) ?? []), action]);
  }
  return new Map([...byKey].map(([key, actions]) => [key, recordOf(key, actions)]));
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
    targetType: 'post',
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

function actionsOf(envelope: ModelEnvelope): Action[] {
  switch (envelope.event) {
    case 'comment.didCreate':
      return commentActions(envelope.data as CommentData);
    case 'reaction.didAdd':
      return reactionActions(envelope.data as ReactionData);
    case 'post.didCreate':
      return postActions(envelope.data as PostData);
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
function postActions(data: PostData): Action[] {
  const { post } = data;
  if (post.targetType === 'community') {
    throw new Error(
      'referenceTray: community posts fan out by membership (docs/contract.md#communitydidjoin-communitydidleave), not modelled',
    );
  }
  return mentioned(post.mentionees).map((userId) => ({
    verb: 'mention',
    recipient: userId,
    targetId: post.postId,
    actor: post.postedUserId,
    actorName: nameOf(post.postedUserId, data.users),
    actionId: post.postId,
    at: Date.parse(post.createdAt ?? ''),
  }));
}

function mentioned(list: Mentionees[] | null | undefined): string[] {
  return [...new Set((list ?? []).filter((m) => m.type === 'user').flatMap((m) => m.userIds))];
}

/** The actor's name as the event's `users` shows it (docs/contract.md#userdidupdate-userdiddelete: as they were when they acted). */
function nameOf(userId: string, users: Profile[] | undefined): string {
  return users?.find((user) => user.userId === userId)?.displayName ?? userId;
}
