import { expect } from 'chai';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { Removal } from '../../../tray-service/domain/removal.ts';
import { ReferenceTray, referenceTray, type TrayOperation } from './reference-tray.ts';
import {
  liveInboxRecords,
  liveRecords,
  referenceCountUnread,
  referenceCountUnseen,
  referencePageNumber,
  referenceViewPage,
} from './reference-tray-reads.ts';
import { aComment, aCommentReaction, aMention, aPost, aReaction, aReply } from '../activity-builder.ts';
import { join, NOW, personal, POST, posts, RETENTION, T } from './model-operations.ts';

const minute = (n: number) => T + n * 60_000;

const removal = (kind: Removal['kind'], id: string, now = NOW + 10): TrayOperation => ({
  kind: 'removal',
  removals: [{ kind, id, postId: 'p-1', at: now }],
  now,
});
const comment = (actor: string, n: number) =>
  aComment(actor, POST, { id: `cm-${actor}-${n}`, at: minute(n), name: actor.toUpperCase(), segment: n });
const commentKey = 'comment_p-1_u-ana';
const only = (tray: ReferenceTray, userId = 'u-ana', now = NOW + 100) =>
  liveInboxRecords(tray, userId, now, 'all');

describe('referenceTray: the inbox (docs/tray-rules.md#inbox)', () => {
  describe('removals', () => {
    it('shrinks a group 3 -> 2 -> 1 -> gone: actors, count and the last action from what remains', () => {
      const tray = new ReferenceTray(RETENTION);
      tray.apply(personal([comment('u-ben', 1), comment('u-cy', 2), comment('u-dee', 3)]));
      tray.apply({ kind: 'markRead', userId: 'u-ana', verb: 'comment', targetId: 'p-1', now: NOW + 1 });
      tray.apply(removal('comment', 'cm-u-dee-3', NOW + 2));
      expect(only(tray)[0]).to.deep.include({
        actorsCount: 2,
        lastActionId: 'cm-u-cy-2',
        lastActionSegmentNo: 2,
        lastUpdate: minute(3),
        hasRead: true,
        unreadAt: NOW,
        changedAt: NOW + 2,
      });
      expect(only(tray)[0]?.actors.map((actor) => actor.userId)).to.deep.equal(['u-cy', 'u-ben']);
      tray.apply(removal('comment', 'cm-u-cy-2', NOW + 3));
      expect(only(tray)[0]).to.deep.include({
        actorsCount: 1,
        lastActionId: 'cm-u-ben-1',
        lastUpdate: minute(3),
      });
      tray.apply(removal('comment', 'cm-u-ben-1', NOW + 4));
      expect(only(tray)).to.deep.equal([]);
      expect(referenceCountUnread(tray, 'u-ana', 0, NOW + 100)).to.equal(0);
    });

    it('keeps an actor who has another action in the record; the next one moves up into the named three', () => {
      const tray = referenceTray(
        [
          personal([
            comment('u-ben', 1),
            comment('u-cy', 2),
            comment('u-dee', 3),
            comment('u-eve', 4),
            comment('u-eve', 5),
          ]),
          removal('comment', 'cm-u-eve-5'),
        ],
        RETENTION,
      );
      const [record] = only(tray);
      expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-eve', 'u-dee', 'u-cy']);
      expect(record).to.deep.include({ actorsCount: 4, lastActionId: 'cm-u-eve-4' });
      tray.apply(removal('comment', 'cm-u-eve-4', NOW + 20));
      expect(only(tray)[0]?.actors.map((actor) => actor.userId)).to.deep.equal(['u-dee', 'u-cy', 'u-ben']);
    });

    it('makes an action that arrives after its removal a no-op; a redelivered removal changes nothing', () => {
      const first = referenceTray(
        [removal('comment', 'cm-u-ben-1', NOW), personal([comment('u-ben', 1)])],
        RETENTION,
      );
      expect(only(first)).to.deep.equal([]);
      const late = referenceTray(
        [
          personal([comment('u-cy', 2)]),
          removal('comment', 'cm-u-ben-1', NOW),
          personal([comment('u-ben', 1)], NOW + 5),
        ],
        RETENTION,
      );
      const [record] = only(late);
      expect(record).to.deep.include({ actorsCount: 1, changedAt: NOW, lastActionId: 'cm-u-cy-2' });
      late.apply(removal('comment', 'cm-u-ben-1', NOW + 50));
      expect(only(late)[0]?.changedAt).to.equal(NOW);
    });

    it('a deleted post takes every record on it and its comments in every tray and shrinks the post record', () => {
      const comment1 = { commentId: 'cm-1', owner: 'u-ben', postId: 'p-1' };
      const tray = referenceTray(
        [
          join('u-ana', minute(0)),
          join('u-ben', minute(0)),
          posts([aPost('u-cy', { id: 'p-0', at: minute(1) }), aPost('u-ana', { id: 'p-1', at: minute(2) })]),
          personal([
            aComment('u-ben', POST, { id: 'cm-1', at: minute(3) }),
            aReaction('u-dee', POST, { id: 'r-1', at: minute(4) }),
            aReply('u-eve', comment1, { id: 'cm-2', at: minute(5) }),
            aCommentReaction('u-eve', comment1, { id: 'r-2', at: minute(6) }),
            aMention('u-ana', 'u-fay', { in: 'post', postId: 'p-1' }, { at: minute(2) }),
            aMention(
              'u-ben',
              'u-fay',
              { in: 'comment', commentId: 'cm-1', postId: 'p-1' },
              { at: minute(3) },
            ),
            aComment('u-ben', { postId: 'p-0', owner: 'u-cy' }, { id: 'cm-9', at: minute(3) }),
          ]),
          removal('post', 'p-1'),
        ],
        RETENTION,
      );
      expect(only(tray, 'u-ana').map((record) => record.key)).to.deep.equal(['post_c-hike_u-ana']);
      expect(only(tray, 'u-fay')).to.deep.equal([]);
      expect(
        only(tray, 'u-ben').map((r) => [r.key, r.actorsCount, r.lastActionId, r.lastUpdate]),
      ).to.deep.equal([['post_c-hike_u-ben', 1, 'p-0', minute(2)]]);
      expect(only(tray, 'u-cy').map((record) => record.key)).to.deep.equal(['comment_p-0_u-cy']);
      tray.apply(personal([aComment('u-dee', POST, { id: 'cm-3', at: minute(7) })], NOW + 20));
      tray.apply(posts([aPost('u-ana', { id: 'p-1', at: minute(2) })], NOW + 20));
      expect(only(tray, 'u-ana').map((record) => record.key)).to.deep.equal(['post_c-hike_u-ana']);
      expect(only(tray, 'u-ben')[0]?.actorsCount).to.equal(1);
    });

    it('a deleted comment takes its replies record and mentions in it, leaving the replies own records', () => {
      const parent = { commentId: 'cm-1', owner: 'u-ben', postId: 'p-1' };
      const reply = { commentId: 'cm-2', owner: 'u-cy', postId: 'p-1' };
      const tray = referenceTray(
        [
          personal([
            aComment('u-ben', POST, { id: 'cm-1', at: minute(1) }),
            aComment('u-dee', POST, { id: 'cm-4', at: minute(2) }),
            aReply('u-cy', parent, { id: 'cm-2', at: minute(3) }),
            aReply('u-dee', reply, { id: 'cm-3', at: minute(4) }),
            aMention(
              'u-ben',
              'u-fay',
              { in: 'comment', commentId: 'cm-1', postId: 'p-1' },
              { at: minute(1) },
            ),
          ]),
          removal('comment', 'cm-1'),
        ],
        RETENTION,
      );
      expect(only(tray, 'u-ana').map((r) => [r.key, r.actorsCount])).to.deep.equal([[commentKey, 1]]);
      expect(only(tray, 'u-ben')).to.deep.equal([]);
      expect(only(tray, 'u-fay')).to.deep.equal([]);
      expect(only(tray, 'u-cy').map((record) => record.key)).to.deep.equal(['mentreply_cm-2_u-cy']);
    });

    it('never brings a record back to the inbox, and never lowers lastUpdate in a later recomputation', () => {
      const tray = referenceTray(
        [
          personal([comment('u-ben', 1), comment('u-cy', 5)]),
          { kind: 'archive', userId: 'u-ana', ids: [commentKey], now: NOW + 1 },
          removal('comment', 'cm-u-cy-5', NOW + 2),
        ],
        RETENTION,
      );
      expect(only(tray)[0]).to.deep.include({
        archivedAt: NOW + 1,
        lastUpdate: minute(5),
        lastActionId: 'cm-u-ben-1',
      });
      // A late, older action is new activity: back in the inbox, newest remaining action, lastUpdate kept.
      tray.apply(personal([comment('u-dee', 3)], NOW + 3));
      expect(only(tray)[0]).to.deep.include({
        archivedAt: null,
        lastUpdate: minute(5),
        lastActionId: 'cm-u-dee-3',
        hasRead: false,
        unreadAt: NOW + 3,
      });
    });

    it('moves a record to an action a removal named before it was delivered again', () => {
      const tray = referenceTray(
        [
          personal([comment('u-ben', 1), comment('u-cy', 5)]),
          { kind: 'deleteAll', userId: 'u-ana', now: NOW + 1 },
          // Made again by Ben's older comment: it names that one and counts Cy's too.
          personal([comment('u-ben', 1)], NOW + 2),
          { kind: 'markAllRead', userId: 'u-ana', now: NOW + 3 },
          removal('comment', 'cm-u-ben-1', NOW + 4),
        ],
        RETENTION,
      );
      expect(only(tray)[0]).to.deep.include({
        lastActionId: 'cm-u-cy-5',
        lastUpdate: minute(1),
        hasRead: true,
      });
      tray.apply(personal([comment('u-cy', 5)], NOW + 5));
      expect(only(tray)[0]).to.deep.include({
        lastActionId: 'cm-u-cy-5',
        lastUpdate: minute(5),
        hasRead: false,
        unreadAt: NOW + 5,
      });
    });
  });

  describe('seen, archive, snooze', () => {
    const three = [comment('u-ben', 1), aReaction('u-cy', POST, { id: 'r-1', at: minute(2) })];
    const keys = [commentKey, 'reaction_p-1_u-ana'];
    const base = () =>
      referenceTray(
        [personal([...three, aMention('u-dee', 'u-ana', { in: 'post', postId: 'p-2' }, { at: minute(3) })])],
        RETENTION,
      );

    it('marks by ids (each once; another user, unknown and expired keys ignored) and counts what changed', () => {
      const tray = base();
      expect(
        tray.apply({
          kind: 'seen',
          userId: 'u-ana',
          ids: [commentKey, commentKey, 'comment_p-1_u-ben', 'x'],
          now: NOW + 1,
        }),
      ).to.equal(1);
      expect(tray.apply({ kind: 'seen', userId: 'u-ana', ids: [commentKey], now: NOW + 2 })).to.equal(0);
      expect(referenceCountUnseen(tray, 'u-ana', NOW + 2)).to.equal(2);
      expect(referenceCountUnread(tray, 'u-ana', 0, NOW + 2)).to.equal(3);
      expect(
        tray.apply({ kind: 'seen', userId: 'u-ana', ids: [commentKey], now: NOW + 91 * DAY_MS }),
      ).to.equal(0);
    });

    it('archives and snoozes out of the inbox and both counts; lists each view; unarchive restores as it was', () => {
      const tray = base();
      expect(
        tray.apply({ kind: 'archive', userId: 'u-ana', ids: [keys[0] as string], now: NOW + 1 }),
      ).to.equal(1);
      expect(
        tray.apply({ kind: 'archive', userId: 'u-ana', ids: [keys[0] as string], now: NOW + 2 }),
      ).to.equal(0);
      expect(
        tray.apply({
          kind: 'snooze',
          userId: 'u-ana',
          ids: [keys[1] as string],
          until: NOW + 60_000,
          now: NOW + 2,
        }),
      ).to.equal(1);
      const view = (name: 'inbox' | 'archived' | 'snoozed' | 'all') =>
        referenceViewPage(tray, 'u-ana', name, undefined, 10, NOW + 3).records.map((r) => r.verb);
      expect([view('inbox'), view('archived'), view('snoozed'), view('all')]).to.deep.equal([
        ['mention'],
        ['comment'],
        ['reaction'],
        ['mention', 'reaction', 'comment'],
      ]);
      expect(referencePageNumber(tray, 'u-ana', 1, 10, NOW + 3, [])).to.have.length(1);
      expect([
        referenceCountUnread(tray, 'u-ana', 0, NOW + 3),
        referenceCountUnseen(tray, 'u-ana', NOW + 3),
      ]).to.deep.equal([1, 1]);
      expect(only(tray).find((r) => r.verb === 'comment')).to.deep.include({
        archivedAt: NOW + 1,
        changedAt: NOW + 1,
      });
      // Archiving the snoozed one ends its snooze; unarchive brings both back unread as they were.
      tray.apply({ kind: 'archive', userId: 'u-ana', ids: keys, now: NOW + 4 });
      expect(view('snoozed')).to.deep.equal([]);
      expect(tray.apply({ kind: 'unarchive', userId: 'u-ana', ids: keys, now: NOW + 5 })).to.equal(2);
      expect(referenceCountUnread(tray, 'u-ana', 0, NOW + 5)).to.equal(3);
    });

    it('`all` covers the inbox only; with readOnly, only records marked read', () => {
      const tray = base();
      tray.apply({ kind: 'markRead', userId: 'u-ana', verb: 'comment', targetId: 'p-1', now: NOW + 1 });
      tray.apply({
        kind: 'snooze',
        userId: 'u-ana',
        ids: [keys[1] as string],
        until: NOW + 60_000,
        now: NOW + 1,
      });
      expect(
        tray.apply({ kind: 'archive', userId: 'u-ana', ids: 'all', readOnly: true, now: NOW + 2 }),
      ).to.equal(1);
      expect(tray.apply({ kind: 'seen', userId: 'u-ana', ids: 'all', now: NOW + 3 })).to.equal(1);
      expect(tray.apply({ kind: 'archive', userId: 'u-ana', ids: 'all', now: NOW + 4 })).to.equal(1);
      expect(liveInboxRecords(tray, 'u-ana', NOW + 4, 'snoozed').map((r) => r.isSeen)).to.deep.equal([false]);
    });

    it('wakes a due snooze unread and unseen, changed at its until, even after an earlier last-read', () => {
      const tray = base();
      tray.apply({ kind: 'markAllRead', userId: 'u-ana', now: NOW + 1 });
      tray.apply({ kind: 'snooze', userId: 'u-ana', ids: [commentKey], until: NOW + 60_000, now: NOW + 2 });
      tray.apply({ kind: 'lastRead', userId: 'u-ana', now: NOW + 3 });
      tray.apply({ kind: 'wake', now: NOW + 59_999 });
      expect(liveInboxRecords(tray, 'u-ana', NOW + 59_999, 'snoozed')).to.have.length(1);
      tray.apply({ kind: 'wake', now: NOW + 60_400 });
      expect(only(tray).find((r) => r.key === commentKey)).to.deep.include({
        snoozedUntil: null,
        hasRead: false,
        isSeen: false,
        unreadAt: NOW + 60_000,
        changedAt: NOW + 60_400,
        lastUpdate: minute(1),
      });
      expect(referenceCountUnread(tray, 'u-ana', tray.lastRead('u-ana'), NOW + 60_400)).to.equal(1);
    });

    it('leaves a record that expired while snoozed as it is: it expires snoozed', () => {
      const tray = base();
      const expiry = minute(1) + RETENTION.retentionDays * DAY_MS;
      tray.apply({ kind: 'snooze', userId: 'u-ana', ids: [commentKey], until: expiry + 1, now: NOW + 1 });
      tray.apply({ kind: 'wake', now: expiry + 1 });
      expect(tray.storedRecords('u-ana').find((r) => r.key === commentKey)).to.deep.include({
        snoozedUntil: expiry + 1,
        changedAt: NOW + 1,
      });
    });

    it('unsnooze brings a record back now as it was', () => {
      const tray = base();
      tray.apply({ kind: 'snooze', userId: 'u-ana', ids: [commentKey], until: NOW + 60_000, now: NOW + 1 });
      expect(
        tray.apply({ kind: 'unsnooze', userId: 'u-ana', ids: [commentKey, commentKey], now: NOW + 2 }),
      ).to.equal(1);
      expect(only(tray).find((r) => r.key === commentKey)).to.deep.include({
        snoozedUntil: null,
        isSeen: false,
        unreadAt: NOW,
      });
    });

    it('new activity brings an archived or snoozed record back unread and unseen', () => {
      const tray = base();
      tray.apply({ kind: 'seen', userId: 'u-ana', ids: 'all', now: NOW + 1 });
      tray.apply({ kind: 'archive', userId: 'u-ana', ids: [keys[0] as string], now: NOW + 1 });
      tray.apply({
        kind: 'snooze',
        userId: 'u-ana',
        ids: [keys[1] as string],
        until: NOW + DAY_MS,
        now: NOW + 1,
      });
      tray.apply(
        personal([comment('u-eve', 9), aReaction('u-eve', POST, { id: 'r-2', at: minute(9) })], NOW + 2),
      );
      expect(
        liveInboxRecords(tray, 'u-ana', NOW + 2, 'inbox').map((r) => [r.verb, r.isSeen, r.hasRead]),
      ).to.deep.equal([
        ['reaction', false, false],
        ['comment', false, false],
        ['mention', true, false],
      ]);
    });

    it('read marks see; last-read sees the records it stops counting', () => {
      const tray = base();
      tray.apply({ kind: 'markRead', userId: 'u-ana', verb: 'comment', targetId: 'p-1', now: NOW + 1 });
      expect(referenceCountUnseen(tray, 'u-ana', NOW + 1)).to.equal(2);
      tray.apply({ kind: 'lastRead', userId: 'u-ana', now: NOW + 2 });
      expect(referenceCountUnseen(tray, 'u-ana', NOW + 2)).to.equal(0);
      expect(only(tray).map((r) => r.changedAt)).to.deep.equal([NOW, NOW, NOW + 1]);
    });
  });

  describe('mutes', () => {
    const mute = (
      targetType: 'post' | 'community' | 'user',
      targetId: string,
      now: number,
    ): TrayOperation => ({
      kind: 'mute',
      userId: 'u-ana',
      target: { targetType, targetId },
      until: null,
      now,
    });
    const unmute = (
      targetType: 'post' | 'community' | 'user',
      targetId: string,
      now: number,
    ): TrayOperation => ({
      kind: 'unmute',
      userId: 'u-ana',
      target: { targetType, targetId },
      now,
    });

    it('a post mute holds back comments while in force, lets mentions through, and adds nothing on unmute', () => {
      const tray = referenceTray(
        [
          personal([comment('u-ben', 1)]),
          mute('post', 'p-1', minute(2)),
          personal([
            comment('u-cy', 3),
            aMention(
              'u-dee',
              'u-ana',
              { in: 'comment', commentId: 'cm-x', postId: 'p-1' },
              { at: minute(3) },
            ),
          ]),
          unmute('post', 'p-1', minute(4)),
          personal([comment('u-eve', 5)]),
          // Delivered late, dated inside the mute: still held back.
          personal([comment('u-fay', 3)], NOW + 1),
        ],
        RETENTION,
      );
      const records = only(tray);
      expect(records.map((r) => [r.verb, r.actorsCount])).to.deep.equal([
        ['comment', 2],
        ['mention', 1],
      ]);
      expect(records[0]?.actors.map((actor) => actor.userId)).to.deep.equal(['u-eve', 'u-ben']);
      expect(tray.apply(unmute('post', 'p-1', minute(6)))).to.equal(0);
    });

    it('a community mute keeps the community posts from its owner; a user mute silences mentions too', () => {
      const tray = referenceTray(
        [
          join('u-ana', minute(0)),
          join('u-ben', minute(0)),
          mute('community', 'c-hike', minute(1)),
          mute('user', 'u-dee', minute(1)),
          posts([aPost('u-cy', { id: 'p-5', at: minute(2) })]),
          personal([
            aMention('u-dee', 'u-ana', { in: 'post', postId: 'p-6' }, { at: minute(2) }),
            aMention('u-cy', 'u-ana', { in: 'post', postId: 'p-5' }, { at: minute(2) }),
          ]),
        ],
        RETENTION,
      );
      expect(only(tray).map((r) => r.key)).to.deep.equal(['mention_p-5_u-ana']);
      expect(only(tray, 'u-ben').map((r) => r.key)).to.deep.equal(['post_c-hike_u-ben']);
      expect(tray.mutesOf('u-ana')).to.have.length(2);
    });

    it('leaves records made before the mute as they are, and removals still apply to them', () => {
      const tray = referenceTray(
        [
          personal([comment('u-ben', 1), comment('u-cy', 2)]),
          mute('post', 'p-1', minute(3)),
          removal('comment', 'cm-u-cy-2'),
        ],
        RETENTION,
      );
      expect(only(tray)[0]).to.deep.include({ actorsCount: 1, lastActionId: 'cm-u-ben-1' });
      expect(liveRecords(tray, 'u-ana', NOW + 100)).to.have.length(1);
    });
  });
});
