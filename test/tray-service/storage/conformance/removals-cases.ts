import { expect } from 'chai';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import type { Removal } from '../../../../tray-service/domain/removal.ts';
import {
  aComment,
  aCommentReaction,
  aMention,
  aPost,
  aReaction,
  aReply,
} from '../../../support/activity-builder.ts';
import { actorIdsOf, at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { modelledStorage, type ModelledStorage } from './modelled-storage.ts';
import { removalOperation } from './removal-operation.ts';

// Removals (docs/tray-rules.md#inbox) against the reference tray: groups shrink to what remains,
// records left with nothing go, tombstones make late actions no-ops. They need the inbox port's
// removals in the writes (the `removals` capability, conformance-adapters.ts).

/** The removal of `id` under Ana's post p-1 at the tray's clock `now`. */
const removal = (context: ConformanceContext, kind: Removal['kind'], id: string, now: number) =>
  removalOperation(context, { kind, id, post: 'p-1', at: now });

/** Comments by `actors` on Ana's post p-1, one a minute, each with its segment. */
function comments(context: ConformanceContext, actors: readonly [string, number][]) {
  const post = { postId: context.id('p-1'), owner: context.id('u-ana') };
  return actors.map(([actor, minute]) =>
    aComment(context.id(actor), post, {
      id: context.id(`cm-${actor}-${minute}`),
      at: at(minute),
      segment: minute,
    }),
  );
}

async function expectAll(tray: ModelledStorage, users: readonly string[], now: number) {
  for (const user of users) await tray.expectModel(user, now);
}

conformanceCase(
  'removals: a record shrinks 3 -> 2 -> 1 -> gone, keeping lastUpdate and its read state',
  async (context) => {
    const tray = modelledStorage(context);
    await tray.personal(
      comments(context, [
        ['u-ben', 1],
        ['u-cy', 2],
        ['u-dee', 3],
      ]),
    );
    await tray.apply({
      kind: 'markRead',
      userId: context.id('u-ana'),
      verb: 'comment',
      targetId: context.id('p-1'),
      now: NOW + 1,
    });
    await tray.apply(removal(context, 'comment', 'cm-u-dee-3', NOW + 2));
    const shrunk = await tray.record('u-ana', 'comment', NOW + 2);
    expect(shrunk).to.deep.include({
      actorsCount: 2,
      lastActionId: context.id('cm-u-cy-2'),
      lastActionSegmentNo: 2,
      lastUpdate: at(3),
      hasRead: true,
    });
    await tray.expectModel('u-ana', NOW + 2);
    await tray.apply(removal(context, 'comment', 'cm-u-cy-2', NOW + 3));
    await tray.expectModel('u-ana', NOW + 3);
    await tray.apply(removal(context, 'comment', 'cm-u-ben-1', NOW + 4));
    expect(await tray.records('u-ana', NOW + 4)).to.deep.equal([]);
    await tray.expectModel('u-ana', NOW + 4);
  },
  { needs: 'removals' },
);

conformanceCase(
  'removals: an action a removal named before it was delivered again moves the record when it comes',
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    const [ben, cy] = comments(context, [
      ['u-ben', 1],
      ['u-cy', 5],
    ]) as [Activity, Activity];
    await tray.personal([ben, cy]);
    // After delete-all, a redelivery of Ben's older comment makes the record again: it names
    // Ben's comment at minute 1 and counts Cy's too (its group's actors).
    await tray.apply({ kind: 'deleteAll', userId: ana, now: NOW + 1 });
    await tray.personal([ben], NOW + 2);
    await tray.apply({
      kind: 'markRead',
      userId: ana,
      verb: 'comment',
      targetId: context.id('p-1'),
      now: NOW + 3,
    });
    // Deleting Ben's comment leaves it naming Cy's, newer than its lastUpdate: nothing new happened.
    await tray.apply(removal(context, 'comment', 'cm-u-ben-1', NOW + 4));
    expect(await tray.record('u-ana', 'comment', NOW + 4)).to.deep.include({
      lastActionId: context.id('cm-u-cy-5'),
      lastUpdate: at(1),
      hasRead: true,
    });
    // Cy's comment delivered again is new activity for this record, as it would be had the
    // removal not come first: the record moves to its time, unread.
    await tray.personal([cy], NOW + 5);
    expect(await tray.record('u-ana', 'comment', NOW + 5)).to.deep.include({
      lastActionId: context.id('cm-u-cy-5'),
      actorsCount: 1,
      lastUpdate: at(5),
      hasRead: false,
    });
    await tray.expectModel('u-ana', NOW + 5);
  },
  { needs: 'removals' },
);

conformanceCase(
  'removals: an actor with another action stays; removing the last action names the next one',
  async (context) => {
    const tray = modelledStorage(context);
    await tray.personal(
      comments(context, [
        ['u-ben', 1],
        ['u-cy', 2],
        ['u-dee', 3],
        ['u-eve', 4],
        ['u-eve', 5],
      ]),
    );
    await tray.apply(removal(context, 'comment', 'cm-u-eve-5', NOW + 1));
    expect(await tray.record('u-ana', 'comment', NOW + 1)).to.deep.include({
      actorsCount: 4,
      lastActionId: context.id('cm-u-eve-4'),
    });
    await tray.expectModel('u-ana', NOW + 1);
    await tray.apply(removal(context, 'comment', 'cm-u-eve-4', NOW + 2));
    await tray.expectModel('u-ana', NOW + 2);
  },
  { needs: 'removals' },
);

conformanceCase(
  'removals: an action arriving after its removal is a no-op; a redelivered removal changes nothing',
  async (context) => {
    const tray = modelledStorage(context);
    await tray.apply(removal(context, 'comment', 'cm-u-ben-1', NOW));
    await tray.personal(comments(context, [['u-ben', 1]]), NOW + 1);
    expect(await tray.records('u-ana', NOW + 1)).to.deep.equal([]);
    await tray.personal(comments(context, [['u-cy', 2]]), NOW + 2);
    await tray.apply(removal(context, 'comment', 'cm-u-cy-2', NOW + 3));
    await tray.personal(comments(context, [['u-dee', 4]]), NOW + 4);
    await tray.apply(removal(context, 'comment', 'cm-u-cy-2', NOW + 5));
    await tray.personal(comments(context, [['u-cy', 2]]), NOW + 6);
    await tray.expectModel('u-ana', NOW + 6);
    expect((await tray.record('u-ana', 'comment', NOW + 6))?.changedAt).to.equal(NOW + 4);
  },
  { needs: 'removals' },
);

conformanceCase(
  "removals: a deleted post takes every record on it and its comments and shrinks the members' post record",
  async (context) => {
    const tray = modelledStorage(context);
    const id = context.id;
    const community = { communityId: tray.communityId };
    const post = { postId: id('p-1'), owner: id('u-ana') };
    const comment1 = { commentId: id('cm-1'), owner: id('u-ben'), postId: id('p-1') };
    await tray.membership('u-ana', true, 0);
    await tray.membership('u-ben', true, 0);
    await tray.posts([
      aPost(id('u-cy'), { id: id('p-0'), at: at(1), ...community }),
      aPost(id('u-ana'), { id: id('p-1'), at: at(2), ...community }),
    ]);
    await tray.personal([
      aComment(id('u-ben'), post, { id: id('cm-1'), at: at(3), ...community }),
      aReaction(id('u-dee'), post, { id: id('r-1'), at: at(4), ...community }),
      aReply(id('u-eve'), comment1, { id: id('cm-2'), at: at(5), ...community }),
      aCommentReaction(id('u-eve'), comment1, { id: id('r-2'), at: at(6), ...community }),
      aMention(id('u-ana'), id('u-fay'), { in: 'post', postId: id('p-1') }, { at: at(2), ...community }),
      aMention(
        id('u-ben'),
        id('u-fay'),
        { in: 'comment', commentId: id('cm-1'), postId: id('p-1') },
        { at: at(3), ...community },
      ),
      aComment(
        id('u-ben'),
        { postId: id('p-0'), owner: id('u-cy') },
        { id: id('cm-9'), at: at(3), ...community },
      ),
    ]);
    await tray.apply(removal(context, 'post', 'p-1', NOW + 1));
    const users = ['u-ana', 'u-ben', 'u-cy', 'u-fay'];
    await expectAll(tray, users, NOW + 1);
    expect(await tray.records('u-fay', NOW + 1)).to.deep.equal([]);
    // The voided actions arriving again (a replay) change nothing.
    await tray.personal([aComment(id('u-dee'), post, { id: id('cm-3'), at: at(7), ...community })], NOW + 2);
    await tray.posts([aPost(id('u-ana'), { id: id('p-1'), at: at(2), ...community })], NOW + 2);
    await expectAll(tray, users, NOW + 2);
  },
  { needs: 'removals' },
);

conformanceCase(
  "removals: a deleted post leaves no member's post record, also of members whose join and leave fall in one millisecond",
  async (context) => {
    const tray = modelledStorage(context);
    const id = context.id;
    await tray.membership('u-ben', true, 0);
    // Dee joins before the post and leaves at her join's own millisecond after the post was
    // delivered: the leave takes nothing back. Cid joins and leaves at the post's millisecond,
    // both after it was delivered: the join adds the post, the leave takes nothing back. Neither
    // is a member at any time, yet both hold the post.
    await tray.membership('u-dee', true, 1);
    await tray.posts([aPost(id('u-ana'), { id: id('p-1'), at: at(2), communityId: tray.communityId })]);
    await tray.membership('u-dee', false, 1, NOW + 1);
    await tray.membership('u-cid', true, 2, NOW + 2);
    await tray.membership('u-cid', false, 2, NOW + 3);
    const users = ['u-ana', 'u-ben', 'u-cid', 'u-dee'];
    for (const user of ['u-ben', 'u-cid', 'u-dee'])
      expect(await tray.record(user, 'post', NOW + 3), user).to.include({ actorsCount: 1 });
    await expectAll(tray, users, NOW + 3);
    await tray.apply(removalOperation(context, { kind: 'post', id: 'p-1', post: 'p-1', at: NOW + 4 }));
    for (const user of users) expect(await tray.records(user, NOW + 4), user).to.deep.equal([]);
    await expectAll(tray, users, NOW + 4);
  },
  { needs: 'removals' },
);

conformanceCase(
  'removals: a deleted comment takes its replies record and the mentions in it; replies keep their own records',
  async (context) => {
    const tray = modelledStorage(context);
    const id = context.id;
    const post = { postId: id('p-1'), owner: id('u-ana') };
    const parent = { commentId: id('cm-1'), owner: id('u-ben'), postId: id('p-1') };
    const reply = { commentId: id('cm-2'), owner: id('u-cy'), postId: id('p-1') };
    await tray.personal([
      aComment(id('u-ben'), post, { id: id('cm-1'), at: at(1) }),
      aComment(id('u-dee'), post, { id: id('cm-4'), at: at(2) }),
      aReply(id('u-cy'), parent, { id: id('cm-2'), at: at(3) }),
      aReply(id('u-dee'), reply, { id: id('cm-3'), at: at(4) }),
      aMention(
        id('u-ben'),
        id('u-fay'),
        { in: 'comment', commentId: id('cm-1'), postId: id('p-1') },
        { at: at(1) },
      ),
    ]);
    await tray.apply(removal(context, 'comment', 'cm-1', NOW + 1));
    await expectAll(tray, ['u-ana', 'u-ben', 'u-cy', 'u-fay'], NOW + 1);
    expect(await tray.records('u-ben', NOW + 1)).to.deep.equal([]);
  },
  { needs: 'removals' },
);

conformanceCase(
  'removals: a removal never brings a record back to the inbox; a later older action takes lastUpdate no lower',
  async (context) => {
    const tray = modelledStorage(context);
    await tray.personal(
      comments(context, [
        ['u-ben', 1],
        ['u-cy', 5],
      ]),
    );
    const key = (await tray.record('u-ana', 'comment'))?.key ?? '';
    await tray.apply({ kind: 'archive', userId: context.id('u-ana'), ids: [key], now: NOW + 1 });
    await tray.apply(removal(context, 'comment', 'cm-u-cy-5', NOW + 2));
    await tray.expectModel('u-ana', NOW + 2);
    await tray.personal(comments(context, [['u-dee', 3]]), NOW + 3);
    await tray.expectModel('u-ana', NOW + 3);
  },
  { needs: 'removals' },
);

// A record counted exactly (its recipient has a mute, or was away) read each actor's actions from
// those kept for it, about the newest 16 per actor: with Ben's 17 newest comments removed,
// PostgreSQL found none of his left and deleted the record, though his first comment still stands.
conformanceCase(
  'removals: an actor whose 17 newest actions on a record are removed stays counted by an older one, the record counted exactly',
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    // A mute of someone else's: the record is counted exactly, and the mute holds nothing back.
    await tray.apply({
      kind: 'mute',
      userId: ana,
      target: { targetType: 'user', targetId: context.id('u-zed') },
      until: null,
      now: NOW,
    });
    const bens = Array.from({ length: 18 }, (_, i): [string, number] => ['u-ben', i + 1]);
    // One delivery each: what is kept per actor is pruned as each comes in.
    for (const comment of comments(context, bens)) await tray.personal([comment]);
    for (let minute = 18; minute >= 2; minute--) {
      await tray.apply(removal(context, 'comment', `cm-u-ben-${minute}`, NOW + 100 - minute));
    }
    const record = await tray.record('u-ana', 'comment', NOW + 100);
    expect(record, 'the record').to.deep.include({ actorsCount: 1, lastActionId: context.id('cm-u-ben-1') });
    expect(actorIdsOf(record)).to.deep.equal([context.id('u-ben')]);
    await tray.expectModel('u-ana', NOW + 100);
  },
);

// The same through the write path: a recipient away once since the record's countFrom has every
// write to it counted exactly, and that count read only the kept copies too, so the next comment
// dropped the actor the removal had kept.
conformanceCase(
  'removals: an actor kept by an older action after a removal stays counted when the next comment comes, the recipient away once',
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    const community = 'c-hike';
    const change = (active: boolean, minute: number) => ({
      communityId: community,
      userId: ana,
      active,
      at: at(minute),
    });
    await tray.changes([change(true, 0)]);
    const bens = Array.from({ length: 18 }, (_, i): [string, number] => ['u-ben', i + 1]);
    for (const comment of comments(context, bens)) await tray.personal([comment]);
    await tray.changes([change(false, 20)], NOW + 1);
    await tray.changes([change(true, 21)], NOW + 2);
    for (let minute = 18; minute >= 2; minute--) {
      await tray.apply(removal(context, 'comment', `cm-u-ben-${minute}`, NOW + 100 - minute));
    }
    await tray.personal(comments(context, [['u-cy', 30]]), NOW + 200);
    const record = await tray.record('u-ana', 'comment', NOW + 200);
    expect(record, 'the record').to.deep.include({ actorsCount: 2, lastActionId: context.id('cm-u-cy-30') });
    expect(actorIdsOf(record)).to.deep.equal([context.id('u-cy'), context.id('u-ben')]);
    await tray.expectModel('u-ana', NOW + 200);
  },
);
