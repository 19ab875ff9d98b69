import type { ExpectedDelivery } from './expected-tray.ts';

/** The users, posts and community a load sequence acts on; `comments` grows as it is generated. */
export interface LoadWorld {
  readonly tag: string;
  /** Users `<tag>-u0` ... ; the first `members` are the community's members. */
  readonly users: number;
  /** Posts `<tag>-p0` ... (created before the sequence): even ones in the community, odd ones on their owner's feed. */
  readonly posts: number;
  readonly members: number;
  readonly comments: { id: string; author: string; post: number }[];
}

type Built = [body: string, expected: ExpectedDelivery[]];

/**
 * Signed-body builders of the events in docs/contract.md#event-catalogue, each returning the body and the
 * record changes the tray must make for it (the reference model the test checks the tray against):
 * an actor is never notified of their own action, a mention is its own record.
 */
export function socialBodies(world: LoadWorld) {
  const { tag } = world;
  const uid = (index: number) => `${tag}-u${index}`;
  const profile = (userId: string) => ({ userId, displayName: `Name ${userId.slice(tag.length + 1)}` });
  const communityId = `${tag}-club`;
  const community = { communityId, displayName: 'Load Club' };
  const postRef = (index: number) => {
    const owner = uid(index % world.users);
    const inCommunity = index % 2 === 0;
    return {
      postId: `${tag}-p${index}`,
      postedUserId: owner,
      targetType: inCommunity ? 'community' : 'user',
      targetId: inCommunity ? communityId : owner,
    };
  };
  const around = (index: number) => (index % 2 === 0 ? { community } : {});
  const iso = (at: number) => new Date(at).toISOString();
  const notify = (key: string, userId: string, actorId: string, actionId: string, at: number) =>
    userId === actorId ? [] : [{ key, userId, actorId, actionId, at }];
  const body = (event: string, data: object) => JSON.stringify({ event, data });

  return {
    uid,
    /** The members' join, before every post of the sequence (posts are dated after `at`). */
    join: (at: number) =>
      body('community.didJoin', {
        community,
        userIds: Array.from({ length: world.members }, (_, m) => uid(m)),
        createdAt: iso(at),
        users: Array.from({ length: world.members }, (_, m) => profile(uid(m))),
      }),
    follow: (n: number, from: string, to: string, at: number) =>
      body('follow.didCreate', { follow: { followId: `${tag}-f${n}`, from, to, createdAt: iso(at) } }),
    flag: (n: number, post: number, by: string, at: number) =>
      body('post.didFlag', {
        post: postRef(post),
        flag: { flagId: `${tag}-fl${n}`, by, createdAt: iso(at) },
      }),

    /** A top-level comment (verb `comment` for the post's owner), sometimes mentioning someone. */
    comment(n: number, actor: string, post: number, at: number, mention: boolean): Built {
      const ref = postRef(post);
      const commentId = `${tag}-cm${n}`;
      const mentioned = uid((n * 7) % world.users);
      world.comments.push({ id: commentId, author: actor, post });
      const data = {
        comment: {
          commentId,
          userId: actor,
          referenceType: 'post',
          referenceId: ref.postId,
          parentId: null,
          segmentNumber: n % 50,
          text: mention ? `@${mentioned} have a look` : `comment ${n}`,
          createdAt: iso(at),
          mentionees: mention ? [{ type: 'user', userIds: [mentioned] }] : [],
        },
        post: ref,
        parentComment: null,
        ...around(post),
        users: [profile(actor), profile(ref.postedUserId)],
      };
      return [
        body('comment.didCreate', data),
        [
          ...notify(`comment_${ref.postId}_${ref.postedUserId}`, ref.postedUserId, actor, commentId, at),
          ...(mention ? notify(`mention_${commentId}_${mentioned}`, mentioned, actor, commentId, at) : []),
        ],
      ];
    },

    /** A reply (verb `mentreply` for the parent comment's author). */
    reply(n: number, actor: string, parent: LoadWorld['comments'][number], at: number): Built {
      const ref = postRef(parent.post);
      const commentId = `${tag}-cm${n}`;
      const data = {
        comment: {
          commentId,
          userId: actor,
          referenceType: 'post',
          referenceId: ref.postId,
          parentId: parent.id,
          segmentNumber: n % 50,
          text: `reply ${n}`,
          createdAt: iso(at),
        },
        post: ref,
        parentComment: { commentId: parent.id, userId: parent.author },
        ...around(parent.post),
        users: [profile(actor)],
      };
      const key = `mentreply_${parent.id}_${parent.author}`;
      return [body('comment.didCreate', data), notify(key, parent.author, actor, commentId, at)];
    },

    reactToPost(n: number, actor: string, post: number, at: number): Built {
      const ref = postRef(post);
      const reactionId = `${tag}-r${n}`;
      const reaction = { reactionId, reactionName: 'like', userId: actor, referenceType: 'post' };
      const data = {
        reaction: { ...reaction, referenceId: ref.postId, createdAt: iso(at) },
        post: ref,
        ...around(post),
        users: [profile(actor)],
      };
      const key = `reaction_${ref.postId}_${ref.postedUserId}`;
      return [body('reaction.didAdd', data), notify(key, ref.postedUserId, actor, reactionId, at)];
    },

    reactToComment(n: number, actor: string, comment: LoadWorld['comments'][number], at: number): Built {
      const ref = postRef(comment.post);
      const reactionId = `${tag}-r${n}`;
      const reaction = { reactionId, reactionName: 'love', userId: actor, referenceType: 'comment' };
      const data = {
        reaction: { ...reaction, referenceId: comment.id, createdAt: iso(at) },
        post: ref,
        comment: { commentId: comment.id, userId: comment.author, referenceId: ref.postId },
        ...around(comment.post),
        users: [profile(actor)],
      };
      const key = `mentreact_${comment.id}_${comment.author}`;
      return [body('reaction.didAdd', data), notify(key, comment.author, actor, reactionId, at)];
    },

    /** A post on the author's own feed mentioning a user: no `post` record (docs/contract.md#postdidcreate), one `mention`. */
    userFeedPost(n: number, actor: string, mentioned: string, at: number): Built {
      const postId = `${tag}-up${n}`;
      const post = { postId, postedUserId: actor, targetType: 'user', targetId: actor };
      const mentionees = [{ type: 'user', userIds: [mentioned] }];
      const data = {
        post: { ...post, text: `@${mentioned}`, createdAt: iso(at), mentionees },
        users: [profile(actor), profile(mentioned)],
      };
      const key = `mention_${postId}_${mentioned}`;
      return [body('post.didCreate', data), notify(key, mentioned, actor, postId, at)];
    },

    /** A community post by member `member`: a `post` record for every other member (fan-out). */
    communityPost(n: number, member: number, at: number): Built {
      const actor = uid(member);
      const postId = `${tag}-cp${n}`;
      const post = { postId, postedUserId: actor, targetType: 'community', targetId: communityId };
      const data = {
        post: { ...post, text: `post ${n}`, createdAt: iso(at) },
        community,
        users: [profile(actor)],
      };
      const expected = Array.from({ length: world.members }, (_, m) =>
        notify(`post_${communityId}_${uid(m)}`, uid(m), actor, postId, at),
      ).flat();
      return [body('post.didCreate', data), expected];
    },
  };
}
