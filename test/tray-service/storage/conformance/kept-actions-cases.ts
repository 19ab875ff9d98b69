import { expect } from 'chai';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { Removal } from '../../../../tray-service/domain/removal.ts';
import { aComment, aPost } from '../../../support/activity-builder.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { modelledStorage, type ModelledStorage } from './modelled-storage.ts';
import { removalOperation } from './removal-operation.ts';

// Kept actions outlive their own retention while a record counting them lives
// (docs/storage.md#kept-actions-live-as-long-as-their-records): a removal computes a record again
// from them, and new activity counts them, whenever the hourly purge ran. Each case purges, so each
// runs on a storage of its own (the purge is whole-store).

/** Day `n` of a thread that started 200 days before NOW: day 92 is still 108 days in the past. */
const day = (n: number) => NOW - 200 * DAY_MS + n * DAY_MS;

/** The case's context on an isolated storage, so its purge touches no other case's rows. */
async function onItsOwn(context: ConformanceContext): Promise<ConformanceContext> {
  const storage = await context.isolated();
  return { storage, id: context.id, peer: context.peer, isolated: context.isolated, write: context.write };
}

/** Comments by `actor` on Ana's post p-1 on day `n`. */
function commentOn(context: ConformanceContext, actor: string, n: number) {
  const post = { postId: context.id('p-1'), owner: context.id('u-ana') };
  return aComment(context.id(actor), post, { id: context.id(`cm-${actor}`), at: day(n), segment: n });
}

/** The removal of `id` under `post` at `at`, applied a second later. */
const removal = (context: ConformanceContext, kind: Removal['kind'], id: string, post: string, at: number) =>
  removalOperation(context, { kind, id, post, at }, at + 1_000);

/** A join or leave of `user` in the case's community on day `n`. */
const changeOn = (
  context: ConformanceContext,
  tray: ModelledStorage,
  user: string,
  active: boolean,
  n: number,
) => ({
  communityId: tray.communityId,
  userId: context.id(user),
  active,
  at: day(n),
});

/** The case's tray with `users` joined its community on day -1, and `post(actor, n)`: a post there on day `n`. */
async function communityOn(context: ConformanceContext, users: readonly string[]) {
  const tray = modelledStorage(context);
  await tray.changes(
    users.map((user) => changeOn(context, tray, user, true, -1)),
    day(-1) + 1_000,
  );
  const post = (actor: string, n: number) =>
    aPost(context.id(actor), { id: context.id(`p-${actor}`), at: day(n), communityId: tray.communityId });
  return { tray, post };
}

/** Ben comments on day 0 and Cy on day 80; the purge runs on day 92 (Ben's comment is 92 days old). */
async function longThread(context: ConformanceContext): Promise<ModelledStorage> {
  const tray = modelledStorage(context);
  await tray.personal([commentOn(context, 'u-ben', 0)], day(0) + 1_000);
  await tray.personal([commentOn(context, 'u-cy', 80)], day(80) + 1_000);
  await context.storage.purgeExpired(new Date(day(92)));
  return tray;
}

conformanceCase(
  'kept actions: after the purge, removing the newer action keeps the older one counted though it is past its own retention',
  async (given) => {
    const context = await onItsOwn(given);
    const tray = await longThread(context);
    await tray.apply(removal(context, 'comment', 'cm-u-cy', 'p-1', day(92)));
    const records = await tray.records('u-ana', day(92) + 2_000);
    expect(records).to.have.length(1);
    expect(records[0]).to.deep.include({
      actorsCount: 1,
      lastActionId: context.id('cm-u-ben'),
      lastUpdate: day(80),
    });
    await tray.expectModel('u-ana', day(92) + 2_000);
  },
  { needs: 'removals' },
);

conformanceCase(
  'kept actions: after the purge, a new action counts every actor of a record that lives, also those past their own retention',
  async (given) => {
    const context = await onItsOwn(given);
    const tray = await longThread(context);
    await tray.personal([commentOn(context, 'u-dee', 92)], day(92) + 1_000);
    const record = await tray.record('u-ana', 'comment', day(92) + 2_000);
    expect(record?.actorsCount).to.equal(3);
    expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(
      ['u-dee', 'u-cy', 'u-ben'].map(context.id),
    );
    await tray.expectModel('u-ana', day(92) + 2_000);
    // And a removal then takes only what it voids.
    await tray.apply(removal(context, 'comment', 'cm-u-dee', 'p-1', day(93)));
    await tray.apply(removal(context, 'comment', 'cm-u-cy', 'p-1', day(94)));
    await tray.expectModel('u-ana', day(94) + 2_000);
    expect((await tray.record('u-ana', 'comment', day(94) + 2_000))?.lastActionId).to.equal(
      context.id('cm-u-ben'),
    );
  },
  { needs: 'removals' },
);

conformanceCase(
  "kept actions: after the purge, a deleted post leaves a community's post record with the older post it counts",
  async (given) => {
    const context = await onItsOwn(given);
    const { tray, post } = await communityOn(context, ['u-ana', 'u-ben', 'u-cy']);
    await tray.posts([post('u-ben', 0)], day(0) + 1_000);
    await tray.posts([post('u-cy', 80)], day(80) + 1_000);
    await context.storage.purgeExpired(new Date(day(92)));
    await tray.apply(removal(context, 'post', 'p-u-cy', 'p-u-cy', day(92)));
    const record = await tray.record('u-ana', 'post', day(92) + 2_000);
    expect(record).to.deep.include({
      actorsCount: 1,
      lastActionId: context.id('p-u-ben'),
      lastUpdate: day(80),
    });
    await tray.expectModel('u-ana', day(92) + 2_000);
  },
  { needs: 'removals' },
);

conformanceCase(
  'kept actions: once no record of the group can live, the purge takes its kept actions; new activity starts afresh',
  async (given) => {
    const context = await onItsOwn(given);
    const tray = modelledStorage(context);
    await tray.personal([commentOn(context, 'u-ben', 0)], day(0) + 1_000);
    await tray.personal([commentOn(context, 'u-cy', 10)], day(10) + 1_000);
    // Cy's comment, the group's newest, is past the retention too: no record counting either lives.
    const after = day(10) + (RETENTION_DAYS + 1) * DAY_MS;
    await context.storage.purgeExpired(new Date(after));
    expect(await tray.records('u-ana', after)).to.deep.equal([]);
    await tray.personal([commentOn(context, 'u-dee', 120)], day(120) + 1_000);
    const record = await tray.record('u-ana', 'comment', day(120) + 2_000);
    expect(record).to.deep.include({ actorsCount: 1, lastActionId: context.id('cm-u-dee') });
  },
  { needs: 'removals' },
);

conformanceCase(
  'kept actions: a record a removal left with lastUpdate above its newest action still counts that action after the purge',
  async (given) => {
    const context = await onItsOwn(given);
    const tray = modelledStorage(context);
    await tray.personal([commentOn(context, 'u-ben', 0)], day(0) + 1_000);
    await tray.personal([commentOn(context, 'u-cy', 80)], day(80) + 1_000);
    // Cy's comment goes: the record counts Ben's (day 0) and keeps lastUpdate day 80, so it lives
    // until day 170, past the expiry of Ben's comment (day 90).
    await tray.apply(removal(context, 'comment', 'cm-u-cy', 'p-1', day(85)));
    await context.storage.purgeExpired(new Date(day(100)));
    await tray.personal([commentOn(context, 'u-dee', 101)], day(101) + 1_000);
    expect((await tray.record('u-ana', 'comment', day(101) + 2_000))?.actorsCount).to.equal(2);
    await tray.expectModel('u-ana', day(101) + 2_000);
    await tray.apply(removal(context, 'comment', 'cm-u-dee', 'p-1', day(102)));
    expect(await tray.record('u-ana', 'comment', day(102) + 2_000)).to.deep.include({
      actorsCount: 1,
      lastActionId: context.id('cm-u-ben'),
    });
    await tray.expectModel('u-ana', day(102) + 2_000);
  },
  { needs: 'removals' },
);

conformanceCase(
  'kept actions: a second removal keeps the later expiry the first one gave the group, past the purge',
  async (given) => {
    const context = await onItsOwn(given);
    const tray = modelledStorage(context);
    await tray.personal([commentOn(context, 'u-ben', 0)], day(0) + 1_000);
    await tray.personal([commentOn(context, 'u-cy', 10)], day(10) + 1_000);
    await tray.personal([commentOn(context, 'u-dee', 80)], day(80) + 1_000);
    // Dee's comment goes: the record keeps lastUpdate day 80 (it lives until day 170) and counts
    // Ben's and Cy's, whose own retention ends on days 90 and 100. Then Cy's goes too: Ben's must
    // still be kept until day 170, not only as long as Cy's comment would have been.
    await tray.apply(removal(context, 'comment', 'cm-u-dee', 'p-1', day(85)));
    await tray.apply(removal(context, 'comment', 'cm-u-cy', 'p-1', day(86)));
    await context.storage.purgeExpired(new Date(day(150)));
    await tray.personal([commentOn(context, 'u-eve', 151)], day(151) + 1_000);
    expect((await tray.record('u-ana', 'comment', day(151) + 2_000))?.actorsCount).to.equal(2);
    await tray.expectModel('u-ana', day(151) + 2_000);
  },
  { needs: 'removals' },
);

for (const [who, lateActor, count] of [
  ['the same actor', 'u-ben', 2],
  ['another actor', 'u-cy', 3],
] as const)
  conformanceCase(
    `kept actions: a late older action of ${who} after a removal kept the group longer leaves it kept as long, past the purge`,
    async (given) => {
      const context = await onItsOwn(given);
      const tray = modelledStorage(context);
      const post = { postId: context.id('p-1'), owner: context.id('u-ana') };
      await tray.personal([commentOn(context, 'u-ben', 0)], day(0) + 1_000);
      await tray.personal([commentOn(context, 'u-dee', 80)], day(80) + 1_000);
      // Dee's comment goes: Ben's (day 0) is kept until day 170, as long as the record. A comment
      // written on day 20, delivered late, is the group's newest action now, its own retention
      // ending on day 110.
      await tray.apply(removal(context, 'comment', 'cm-u-dee', 'p-1', day(85)));
      const late = aComment(context.id(lateActor), post, {
        id: context.id('cm-late'),
        at: day(20),
        segment: 20,
      });
      await tray.personal([late], day(86) + 1_000);
      await tray.expectModel('u-ana', day(86) + 2_000);
      await context.storage.purgeExpired(new Date(day(150)));
      await tray.personal([commentOn(context, 'u-eve', 151)], day(151) + 1_000);
      expect((await tray.record('u-ana', 'comment', day(151) + 2_000))?.actorsCount).to.equal(count);
      await tray.expectModel('u-ana', day(151) + 2_000);
    },
    { needs: 'removals' },
  );

// What decides whether a kept action counts lives as long as the records that may count it: a
// mute span and a member's leaves and joins are judged again whenever such a record is computed
// again, however long ago they ended.

conformanceCase(
  'kept actions: after the purge, a mute span that ended over the retention ago still holds back what it covered when a removal computes the record again',
  async (given) => {
    const context = await onItsOwn(given);
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    const target = { targetType: 'post', targetId: context.id('p-1') } as const;
    await tray.personal([commentOn(context, 'u-ben', 0)], day(0) + 1_000);
    await tray.apply({ kind: 'mute', userId: ana, target, until: null, now: day(1) });
    await tray.personal([commentOn(context, 'u-cy', 2)], day(2) + 1_000);
    await tray.apply({ kind: 'unmute', userId: ana, target, now: day(3) });
    await tray.personal([commentOn(context, 'u-dee', 80)], day(80) + 1_000);
    // The span ended on day 3, its own retention on day 93; Ana's record (from day 0) lives until day 170.
    await context.storage.purgeExpired(new Date(day(95)));
    await tray.apply(removal(context, 'comment', 'cm-u-dee', 'p-1', day(95)));
    expect(await tray.record('u-ana', 'comment', day(95) + 2_000)).to.deep.include({
      actorsCount: 1,
      lastActionId: context.id('cm-u-ben'),
    });
    await tray.expectModel('u-ana', day(95) + 2_000);
  },
  { needs: 'removals' },
);

conformanceCase(
  "kept actions: a member's leave and join older than the retention still decide their community's post record when a removal computes it again",
  async (given) => {
    const context = await onItsOwn(given);
    const { tray, post } = await communityOn(context, ['u-ana', 'u-ben', 'u-cy', 'u-dee']);
    const change = (user: string, active: boolean, n: number) => changeOn(context, tray, user, active, n);
    await tray.posts([post('u-ben', 0)], day(0) + 1_000);
    await tray.changes([change('u-ana', false, 1)], day(1) + 1_000);
    await tray.posts([post('u-dee', 2)], day(2) + 1_000);
    await tray.changes([change('u-ana', true, 3)], day(3) + 1_000);
    await tray.posts([post('u-cy', 80)], day(80) + 1_000);
    // Ana's record counts Ben's post of day 0 and Cy's of day 80, not Dee's from while she was
    // away. Two more of her changes after the retention: each stored change prunes her older ones.
    await tray.changes([change('u-ana', true, 95)], day(95));
    await tray.changes([change('u-ana', true, 95.5)], day(95.5));
    await tray.apply(removal(context, 'post', 'p-u-cy', 'p-u-cy', day(96)));
    expect(await tray.record('u-ana', 'post', day(96) + 2_000)).to.deep.include({
      actorsCount: 1,
      lastActionId: context.id('p-u-ben'),
    });
    await tray.expectModel('u-ana', day(96) + 2_000);
  },
  { needs: 'removals' },
);

conformanceCase(
  "kept actions: a join before a leave processed late still decides the post record after the member's old changes are pruned",
  async (given) => {
    const context = await onItsOwn(given);
    const { tray, post } = await communityOn(context, ['u-ana', 'u-ben', 'u-cy']);
    const change = (user: string, active: boolean, n: number) => changeOn(context, tray, user, active, n);
    await tray.posts([post('u-ben', 0)], day(0) + 1_000);
    await tray.posts([post('u-cy', 40)], day(40) + 1_000);
    // Three changes of Ana's arrive late, each after the posts: a leave on day 30, a join on day
    // 20 and a leave on day -0.5. None takes a post back: her join of day -1 lets both in, and her
    // record (from day 0) lives until day 130.
    await tray.changes([change('u-ana', false, 30)], day(45));
    await tray.changes([change('u-ana', true, 20)], day(46));
    await tray.changes([change('u-ana', false, -0.5)], day(50));
    // A change of hers after the retention prunes her old ones (the cutoff: her record's day 0).
    await tray.changes([change('u-ana', false, 100)], day(100));
    // Ben's post is deleted: computed again, her record keeps Cy's, which only the join of day -1
    // lets in (the late join of day 20 does not: the leave of day 30 was processed before it).
    await tray.apply(removal(context, 'post', 'p-u-ben', 'p-u-ben', day(101)));
    expect(await tray.record('u-ana', 'post', day(101) + 2_000)).to.deep.include({
      actorsCount: 1,
      lastActionId: context.id('p-u-cy'),
    });
    await tray.expectModel('u-ana', day(101) + 2_000);
  },
  { needs: 'removals' },
);

// A removal's tombstone makes what it voids a no-op whenever it arrives (a replay of the stored
// events, a spool drained late): it lives as long as a record could take that action again.

conformanceCase(
  "kept actions: a deleted comment replayed after its tombstone's own retention stays out of the thread's record that lives on",
  async (given) => {
    const context = await onItsOwn(given);
    const tray = modelledStorage(context);
    const ben = commentOn(context, 'u-ben', 0);
    await tray.personal([ben], day(0) + 1_000);
    await tray.personal([commentOn(context, 'u-cy', 1)], day(1) + 1_000);
    await tray.apply(removal(context, 'comment', 'cm-u-ben', 'p-1', day(1) + 5_000));
    await tray.personal([commentOn(context, 'u-dee', 80)], day(80) + 1_000);
    // The tombstone's own retention ended on day 91; the thread's record lives until day 170.
    await context.storage.purgeExpired(new Date(day(95)));
    await tray.personal([ben], day(95));
    expect(await tray.record('u-ana', 'comment', day(95) + 2_000)).to.deep.include({ actorsCount: 2 });
    await tray.expectModel('u-ana', day(95) + 2_000);
  },
  { needs: 'removals' },
);

conformanceCase(
  "kept actions: a deleted community post replayed after its tombstone's own retention stays out of the members' post records",
  async (given) => {
    const context = await onItsOwn(given);
    const { tray, post } = await communityOn(context, ['u-ana', 'u-ben', 'u-cy']);
    const benPost = post('u-ben', 0);
    await tray.posts([benPost], day(0) + 1_000);
    const deleted = {
      kind: 'post',
      id: 'p-u-ben',
      post: 'p-u-ben',
      at: day(1),
      community: 'c-hike',
    } as const;
    await tray.apply(removalOperation(context, deleted));
    await tray.posts([post('u-cy', 80)], day(80) + 1_000);
    await context.storage.purgeExpired(new Date(day(95)));
    await tray.posts([benPost], day(95));
    expect(await tray.record('u-ana', 'post', day(95) + 2_000)).to.deep.include({
      actorsCount: 1,
      lastActionId: context.id('p-u-cy'),
    });
    await tray.expectModel('u-ana', day(95) + 2_000);
  },
  { needs: 'removals' },
);
