import { expect } from 'chai';
import { bannedUsers, referenceTray, type ModelEnvelope } from './reference-tray-model.ts';

// Hand-computed sequences: each expectation below was worked out from the contract
// (docs/contract.md#record-fields-per-verb), not by running the product.

const at = (second: number) => new Date(Date.UTC(2026, 10, 20, 10, 0, second)).toISOString();
const users = ['ana', 'ben', 'cid', 'dee', 'eve'].map((id) => ({
  userId: id,
  displayName: id.toUpperCase(),
}));
const post = { postId: 'p1', postedUserId: 'ana', targetType: 'community', targetId: 'c1' };
const community = { communityId: 'c1', displayName: 'Club' };

interface CommentRef {
  commentId: string;
  userId: string;
}

function comment(
  id: string,
  by: string,
  second: number,
  { parent, mentions }: { parent?: CommentRef; mentions?: string[] } = {},
): ModelEnvelope {
  return {
    event: 'comment.didCreate',
    data: {
      comment: {
        commentId: id,
        userId: by,
        referenceType: 'post',
        referenceId: 'p1',
        parentId: parent?.commentId ?? null,
        segmentNumber: second,
        createdAt: at(second),
        mentionees: mentions ? [{ type: 'user', userIds: mentions }] : [],
      },
      post,
      community,
      parentComment: parent ?? null,
      users,
    },
  };
}

function reaction(id: string, by: string, second: number, onComment?: CommentRef): ModelEnvelope {
  return {
    event: 'reaction.didAdd',
    data: {
      reaction: {
        reactionId: id,
        userId: by,
        referenceType: onComment ? 'comment' : 'post',
        referenceId: onComment?.commentId ?? 'p1',
        createdAt: at(second),
      },
      post,
      ...(onComment ? { comment: onComment } : {}),
      community,
      users,
    },
  };
}

describe('reference tray model (test/reliability/support/reference-tray-model.ts)', () => {
  describe('five comments on one post by four actors, one of them the post owner', () => {
    const events = [
      comment('k1', 'ben', 1),
      comment('k2', 'cid', 2),
      comment('k3', 'ana', 3),
      comment('k4', 'ben', 4),
      comment('k5', 'dee', 5),
    ];

    it('gives the owner one comment record: 3 distinct actors (the owner not counted), newest first', () => {
      const tray = referenceTray(events);
      expect([...tray.keys()]).to.deep.equal(['comment_p1_ana']);
      expect(tray.get('comment_p1_ana')).to.deep.equal({
        key: 'comment_p1_ana',
        userId: 'ana',
        verb: 'comment',
        targetId: 'p1',
        targetType: 'post',
        parentTargetId: 'c1',
        actorsCount: 3,
        actorIds: ['dee', 'ben', 'cid'],
        actorNames: ['DEE', 'BEN', 'CID'],
        lastActionId: 'k5',
        lastActionSegmentNo: 5,
        lastUpdate: Date.parse(at(5)),
        hasRead: false,
      });
    });

    it('gives the same tray for the sequence reversed (the state is a function of the set)', () => {
      expect(referenceTray([...events].reverse())).to.deep.equal(referenceTray(events));
    });
  });

  describe('an actor whose newest action arrives first and an older one later', () => {
    it('keeps the newest action as the last one and counts the actor once', () => {
      const record = referenceTray([
        reaction('r9', 'ben', 9),
        reaction('r2', 'ben', 2),
        reaction('r5', 'cid', 5),
      ]).get('reaction_p1_ana');
      expect(record).to.include({ actorsCount: 2, lastActionId: 'r9', lastUpdate: Date.parse(at(9)) });
      expect(record?.actorIds).to.deep.equal(['ben', 'cid']);
      expect(record).not.to.have.property('lastActionSegmentNo');
    });
  });

  describe('a reply, a reaction to a comment and a mention in a comment', () => {
    const parent = { commentId: 'k1', userId: 'ben' };
    const tray = referenceTray([
      comment('k1', 'ben', 1),
      comment('k2', 'cid', 2, { parent, mentions: ['dee', 'dee', 'cid'] }),
      reaction('r3', 'eve', 3, parent),
      reaction('r4', 'ben', 4, parent),
    ]);

    it('makes one record per (verb, target, recipient), mentions keyed by the comment', () => {
      expect([...tray.keys()].sort()).to.deep.equal([
        'comment_p1_ana',
        'mention_k2_dee',
        'mentreact_k1_ben',
        'mentreply_k1_ben',
      ]);
    });

    it('gives the reply record the post as parent and the reply as last action', () => {
      expect(tray.get('mentreply_k1_ben')).to.include({
        parentTargetId: 'p1',
        lastActionId: 'k2',
        lastActionSegmentNo: 2,
        actorsCount: 1,
      });
    });

    it('counts only the other reactor on the comment (its author reacting is not notified)', () => {
      expect(tray.get('mentreact_k1_ben')).to.include({
        actorsCount: 1,
        lastActionId: 'r3',
        parentTargetId: 'p1',
      });
    });

    it('gives a user mentioned twice in one comment one mention record with one actor', () => {
      const mention = tray.get('mention_k2_dee');
      expect(mention).to.include({ actorsCount: 1, parentTargetId: 'p1', lastActionId: 'k2' });
      expect(mention).not.to.have.property('lastActionSegmentNo');
    });
  });

  describe('store-only events and a post on a user feed', () => {
    it('adds no record for channel.didCreate and only mention records for the post', () => {
      const tray = referenceTray([
        { event: 'channel.didCreate', data: { channel: { channelId: 'x' } } },
        {
          event: 'post.didCreate',
          data: {
            post: {
              postId: 'up1',
              postedUserId: 'ana',
              targetType: 'user',
              targetId: 'ben',
              createdAt: at(7),
              mentionees: [{ type: 'user', userIds: ['cid', 'ana'] }],
            },
            users,
          },
        },
      ]);
      expect([...tray.keys()]).to.deep.equal(['mention_up1_cid']);
      expect(tray.get('mention_up1_cid')).to.include({ actorsCount: 1, lastActionId: 'up1' });
      expect(tray.get('mention_up1_cid')).not.to.have.property('parentTargetId');
    });

    it('has no community post record without members', () => {
      const tray = referenceTray([
        { event: 'post.didCreate', data: { post: { ...post, createdAt: at(1) }, community, users } },
      ]);
      expect([...tray.keys()]).to.deep.equal([]);
    });
  });

  describe('community posts and memberships by time', () => {
    const communityPost = (id: string, by: string, second: number): ModelEnvelope => ({
      event: 'post.didCreate',
      data: { post: { ...post, postId: id, postedUserId: by, createdAt: at(second) }, community, users },
    });
    const member = (kind: 'join' | 'leave', who: string, second: number | undefined): ModelEnvelope => ({
      event: kind === 'join' ? 'community.didJoin' : 'community.didLeave',
      data: {
        community,
        userIds: [who],
        ...(second === undefined ? {} : { createdAt: at(second) }),
      },
    });
    // Ben joins at 10; Cid is a member from 0, leaves at 20 and rejoins at 30; Dee joins at 25
    // and leaves at 25 (same time: not a member).
    const events = [
      communityPost('q5', 'ana', 5),
      communityPost('q10', 'eve', 10),
      communityPost('q25', 'ana', 25),
      communityPost('q35', 'eve', 35),
      member('join', 'ben', 10),
      member('join', 'cid', 0),
      member('leave', 'cid', 20),
      member('join', 'cid', 30),
      member('join', 'dee', 25),
      member('leave', 'dee', 25),
    ];

    it('gives each member the posts created while they were a member, the author excluded', () => {
      const tray = referenceTray(events);
      expect([...tray.keys()].sort()).to.deep.equal(['post_c1_ben', 'post_c1_cid']);
      expect(tray.get('post_c1_ben')).to.deep.include({
        verb: 'post',
        targetId: 'c1',
        targetType: 'community',
        actorsCount: 2,
        actorIds: ['eve', 'ana'],
        lastActionId: 'q35',
        lastUpdate: Date.parse(at(35)),
      });
      // Cid got q5, q10 and q35, not q25 (away): Ana is named for q5, as she posted it.
      expect(tray.get('post_c1_cid')).to.deep.include({
        lastActionId: 'q35',
        actorsCount: 2,
        actorIds: ['eve', 'ana'],
      });
    });

    it('gives a member nothing of the community’s targets while away: comments, replies, reactions, mentions', () => {
      const onCid = { commentId: 'k0', userId: 'cid' };
      const tray = referenceTray([
        member('join', 'cid', 0),
        member('leave', 'cid', 20),
        member('join', 'cid', 30),
        // Ana's post p1 is Cid's target only through his comment k0; Cid owns the comment.
        comment('k0', 'cid', 1),
        comment('k1', 'ben', 5, { parent: onCid }),
        comment('k2', 'dee', 25, { parent: onCid, mentions: ['cid'] }),
        reaction('r1', 'eve', 26, onCid),
        comment('k3', 'eve', 35, { parent: onCid }),
      ]);
      expect(tray.get('mentreply_k0_cid')).to.deep.include({ actorIds: ['eve', 'ben'], actorsCount: 2 });
      expect(tray.has('mention_k2_cid')).to.equal(false);
      expect(tray.has('mentreact_k0_cid')).to.equal(false);
    });

    it('gives the same tray whatever order the joins, leaves and posts come in', () => {
      expect(referenceTray([...events].reverse())).to.deep.equal(referenceTray(events));
      const shuffled = [
        events[6]!,
        events[3]!,
        events[9]!,
        events[0]!,
        events[7]!,
        events[2]!,
        events[5]!,
        events[1]!,
        events[8]!,
        events[4]!,
      ];
      expect(referenceTray(shuffled)).to.deep.equal(referenceTray(events));
    });

    it('refuses a join without createdAt (it counts from a receipt the model cannot know)', () => {
      expect(() => referenceTray([member('join', 'ben', undefined)])).to.throw(/not modelled/);
    });
  });

  describe('global bans', () => {
    const ban = (event: string, who: string, second: number): ModelEnvelope => ({
      event,
      data: { userIds: [who], createdAt: at(second), users },
    });

    it('change no record', () => {
      const events = [
        comment('k1', 'ben', 1),
        ban('user.didGlobalBan', 'ana', 2),
        ban('user.didGlobalBan', 'ben', 3),
      ];
      expect(referenceTray(events)).to.deep.equal(referenceTray([comment('k1', 'ben', 1)]));
    });

    it('leave banned the users whose newest change by createdAt is a ban (a ban wins a tie)', () => {
      const banned = bannedUsers([
        ban('user.didGlobalUnban', 'ana', 5),
        ban('user.didGlobalBan', 'ana', 4),
        ban('user.didGlobalBan', 'ben', 4),
        ban('user.didGlobalUnban', 'ben', 3),
        ban('user.didGlobalUnban', 'cid', 6),
        ban('user.didGlobalBan', 'cid', 6),
      ]);
      expect([...banned].sort()).to.deep.equal(['ben', 'cid']);
    });
  });
});
