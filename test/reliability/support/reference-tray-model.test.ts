import { expect } from 'chai';
import { referenceTray, type ModelEnvelope } from './reference-tray-model.ts';

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

    it('refuses a community post rather than guess its members', () => {
      expect(() =>
        referenceTray([
          { event: 'post.didCreate', data: { post: { ...post, createdAt: at(1) }, community, users } },
        ]),
      ).to.throw(/not modelled/);
    });
  });
});
