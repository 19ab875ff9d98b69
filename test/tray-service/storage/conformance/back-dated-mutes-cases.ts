import { expect } from 'chai';
import type { MuteTargetType } from '../../../../tray-service/domain/mute.ts';
import { aComment, aPost } from '../../../support/activity-builder.ts';
import { actorIdsOf, at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { modelledStorage, type ModelledStorage } from './modelled-storage.ts';

// Back-dated mutes (docs/tray-rules.md#inbox): a mute whose start falls before an action a record
// already counts (the platform's clock ahead of the tray's). Putting it changes no record; the next
// computation of the record, whatever makes it (a removal in its group, the recipient's own action
// included, a delivery, a late leave), counts the record without what the mute covers, as if it had
// been in force when the action came. Each case asserts the record and that the tray is the model's.

/**
 * Ana's post p-1 on her own feed with comments by Cy (minute 1), Ben (3) and Ana herself (4), all
 * delivered; `comment(actor, minute)` makes the actor's comment `cm-<actor>-<minute>`.
 */
async function commentedPost(context: ConformanceContext) {
  const id = context.id;
  const ana = id('u-ana');
  const post = { postId: id('p-1'), owner: ana };
  const comment = (actor: string, minute: number) =>
    aComment(id(actor), post, { id: id(`cm-${actor}-${minute}`), at: at(minute), userFeed: ana });
  const tray = modelledStorage(context);
  await tray.personal([comment('u-cy', 1), comment('u-ben', 3), comment('u-ana', 4)]);
  return { tray, id, ana, comment };
}

/** Ana, a member of the case's community since minute 0. */
async function anaInTheCommunity(context: ConformanceContext) {
  const tray = modelledStorage(context);
  await tray.membership('u-ana', true, 0);
  return { tray, id: context.id, ana: context.id('u-ana'), communityId: tray.communityId };
}

/** Ana's mute of a target dated `at` (the tray's clock then), until removed. */
function mute(tray: ModelledStorage, ana: string, targetType: MuteTargetType, targetId: string, now: number) {
  return tray.apply({ kind: 'mute', userId: ana, target: { targetType, targetId }, until: null, now });
}

/** Ana's unmute of the user, dated `now`. */
function unmuteUser(tray: ModelledStorage, ana: string, userId: string, now: number) {
  return tray.apply({ kind: 'unmute', userId: ana, target: { targetType: 'user', targetId: userId }, now });
}

function removeComment(tray: ModelledStorage, context: ConformanceContext, comment: string, now: number) {
  return tray.apply({
    kind: 'removal',
    removals: [{ kind: 'comment', id: context.id(comment), postId: context.id('p-1'), at: now }],
    now,
  });
}

/** Ana's comment record names and counts `actors` (none: there is no record), as the model's. */
async function expectComment(tray: ModelledStorage, actors: string[], now: number) {
  const record = await tray.record('u-ana', 'comment', now);
  if (actors.length === 0) expect(record).to.equal(undefined);
  else {
    expect(actorIdsOf(record)).to.deep.equal(actors);
    expect(record?.actorsCount).to.equal(actors.length);
  }
  await tray.expectModel('u-ana', now);
  return record;
}

conformanceCase(
  "back-dated mutes: removing the recipient's own action in the group computes the record again without the muted actor",
  async (context) => {
    const { tray, id, ana } = await commentedPost(context);
    await mute(tray, ana, 'user', id('u-ben'), at(2));
    // Putting it changes nothing yet.
    await expectComment(tray, [id('u-ben'), id('u-cy')], NOW);
    await removeComment(tray, context, 'cm-u-ana-4', NOW + 1);
    const record = await expectComment(tray, [id('u-cy')], NOW + 1);
    // A removal is no new activity: the record keeps its place in history.
    expect(record).to.include({ lastActionId: id('cm-u-cy-1'), lastUpdate: at(3) });
  },
  { needs: 'removals' },
);

conformanceCase(
  "back-dated mutes: a post mute, and removing the recipient's own action, leaves no record",
  async (context) => {
    const { tray, id, ana } = await commentedPost(context);
    await mute(tray, ana, 'post', id('p-1'), at(0));
    await removeComment(tray, context, 'cm-u-ana-4', NOW + 1);
    await expectComment(tray, [], NOW + 1);
  },
  { needs: 'removals' },
);

conformanceCase(
  "back-dated mutes: removing another actor's action computes the record without the muted actor too",
  async (context) => {
    const { tray, id, ana, comment } = await commentedPost(context);
    await tray.personal([comment('u-dee', 5)]);
    await mute(tray, ana, 'user', id('u-ben'), at(2));
    await removeComment(tray, context, 'cm-u-cy-1', NOW + 1);
    await expectComment(tray, [id('u-dee')], NOW + 1);
    // Removing the last one left removes the record.
    await removeComment(tray, context, 'cm-u-dee-5', NOW + 2);
    await expectComment(tray, [], NOW + 2);
  },
  { needs: 'removals' },
);

conformanceCase(
  'back-dated mutes: a new action in the group counts the record without the muted actor',
  async (context) => {
    const { tray, id, ana, comment } = await commentedPost(context);
    await mute(tray, ana, 'user', id('u-ben'), at(2));
    await tray.personal([comment('u-dee', 5)], NOW + 1);
    const record = await expectComment(tray, [id('u-dee'), id('u-cy')], NOW + 1);
    expect(record).to.include({ lastActionId: id('cm-u-dee-5'), hasRead: false });
    // And a comment of the muted actor after it: held back.
    await tray.personal([comment('u-ben', 6)], NOW + 2);
    await expectComment(tray, [id('u-dee'), id('u-cy')], NOW + 2);
  },
  { needs: 'inbox' },
);

conformanceCase(
  "back-dated mutes: a redelivery of the muted actor's action changes nothing; another's computes the record without it",
  async (context) => {
    const { tray, id, ana, comment } = await commentedPost(context);
    await tray.apply({ kind: 'markAllRead', userId: ana, now: NOW + 1 });
    await mute(tray, ana, 'user', id('u-ben'), at(2));
    // Held back, so it reaches nothing.
    await tray.personal([comment('u-ben', 3)], NOW + 2);
    let record = await expectComment(tray, [id('u-ben'), id('u-cy')], NOW + 2);
    expect(record).to.include({ hasRead: true });
    // A delivery that computes the record again is new activity, a redelivery too (docs/tray-rules.md).
    await tray.personal([comment('u-cy', 1)], NOW + 3);
    record = await expectComment(tray, [id('u-cy')], NOW + 3);
    expect(record).to.include({ hasRead: false });
  },
  { needs: 'inbox' },
);

conformanceCase(
  'back-dated mutes: a mute removed again before what it covers keeps counting it, whatever computes the record',
  async (context) => {
    const { tray, id, ana, comment } = await commentedPost(context);
    // In force from minute 2 to half past: Ben's comment at minute 3 fell after it.
    await mute(tray, ana, 'user', id('u-ben'), at(2));
    await unmuteUser(tray, ana, id('u-ben'), at(2, 30_000));
    await removeComment(tray, context, 'cm-u-ana-4', NOW + 1);
    await expectComment(tray, [id('u-ben'), id('u-cy')], NOW + 1);
    await tray.personal([comment('u-dee', 5)], NOW + 2);
    await expectComment(tray, [id('u-dee'), id('u-ben'), id('u-cy')], NOW + 2);
  },
  { needs: 'removals' },
);

conformanceCase(
  'back-dated mutes: a back-dated mute removed after the action keeps holding it back on the next computation',
  async (context) => {
    const { tray, id, ana } = await commentedPost(context);
    await mute(tray, ana, 'user', id('u-ben'), at(2));
    await unmuteUser(tray, ana, id('u-ben'), at(3, 30_000));
    await removeComment(tray, context, 'cm-u-ana-4', NOW + 1);
    await expectComment(tray, [id('u-cy')], NOW + 1);
  },
  { needs: 'removals' },
);

conformanceCase(
  'back-dated mutes: a redelivered leave computes nothing, so a record counting the muted actor keeps it',
  async (context) => {
    const { tray, id, ana, communityId } = await anaInTheCommunity(context);
    await tray.membership('u-ana', false, 2, NOW + 1);
    await tray.posts([aPost(id('u-kim'), { id: id('p-kim'), at: at(1), communityId })], NOW + 2);
    // A comment on Ana's post after she left, held back, processed after her leave was stored.
    const anasPost = { postId: id('p-ana'), owner: ana };
    await tray.personal(
      [aComment(id('u-cy'), anasPost, { id: id('cm-1'), at: at(3), communityId })],
      NOW + 3,
    );
    await mute(tray, ana, 'user', id('u-kim'), at(0));
    // The platform delivers the leave again: it takes back nothing and computes no record.
    await tray.membership('u-ana', false, 2, NOW + 4);
    const record = await tray.record('u-ana', 'post', NOW + 4);
    expect(actorIdsOf(record)).to.deep.equal([id('u-kim')]);
    await tray.expectModel('u-ana', NOW + 4);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'back-dated mutes: a redelivered removed comment computes nothing, so the record keeps counting the muted actor',
  async (context) => {
    const { tray, id, ana, comment } = await commentedPost(context);
    await tray.personal([comment('u-dee', 5)]);
    await removeComment(tray, context, 'cm-u-ana-4', NOW + 1);
    await removeComment(tray, context, 'cm-u-dee-5', NOW + 2);
    await mute(tray, ana, 'user', id('u-ben'), at(2));
    // The platform delivers the removed comments again, Ana's own and Dee's: both are no-ops.
    await tray.personal([comment('u-ana', 4)], NOW + 3);
    await tray.personal([comment('u-dee', 5)], NOW + 4);
    await expectComment(tray, [id('u-ben'), id('u-cy')], NOW + 4);
  },
  { needs: 'removals' },
);

conformanceCase(
  'back-dated mutes: a redelivered removed post computes nothing, though the record shows its author at that time for another post',
  async (context) => {
    const { tray, id, ana, communityId } = await anaInTheCommunity(context);
    // Kim's two posts in the same millisecond; the second is removed.
    const post = (postId: string) => aPost(id('u-kim'), { id: id(postId), at: at(1), communityId });
    await tray.posts([post('p-1'), post('p-2')], NOW + 1);
    await tray.apply({
      kind: 'removal',
      removals: [{ kind: 'post', id: id('p-2'), postId: id('p-2'), at: NOW + 2 }],
      now: NOW + 2,
    });
    await mute(tray, ana, 'user', id('u-kim'), at(0));
    // Redelivered: the first is held back by the mute, the second removed; neither computes the record.
    await tray.posts([post('p-1'), post('p-2')], NOW + 3);
    const record = await tray.record('u-ana', 'post', NOW + 3);
    expect(actorIdsOf(record)).to.deep.equal([id('u-kim')]);
    await tray.expectModel('u-ana', NOW + 3);
  },
  { needs: 'removals' },
);
