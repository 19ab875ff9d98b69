import { expect } from 'chai';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import {
  aComment,
  aCommentReaction,
  aMention,
  aPost,
  aReaction,
  aReply,
} from '../../../support/activity-builder.ts';
import { storePostEvents } from './apply-operation.ts';
import { actorIdsOf, at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { modelledStorage, type ModelledStorage } from './modelled-storage.ts';

/**
 * Leaving and rejoining a community (docs/tray-rules.md#leaving-and-rejoining-a-community): a member
 * who left gets nothing of the community's targets while away, in whatever order the joins, leaves
 * and actions arrive; after rejoining, updates resume without anything of the time away. Each case
 * asserts the records themselves and that every tray it touched is the reference tray's.
 */

function postBy(context: ConformanceContext, communityId: string) {
  return (author: string, minute: number, ms = 0): Activity =>
    aPost(context.id(author), {
      id: context.id(`p-${author}-${minute}-${ms}`),
      at: at(minute, ms),
      communityId,
      name: author,
    });
}

const MEMBERS = ['ana', 'kim', 'own', 'pete', 'eve'];

/** The context with ids of a run of its own: two runs of one case never share a user or a target. */
function within(context: ConformanceContext, run: string): ConformanceContext {
  return { ...context, id: (name) => context.id(`${name}-${run.replace(' ', '-')}`) };
}

conformanceCase(
  'leave and rejoin: the post record names and counts only who posted while the member was there',
  async (context) => {
    const c = modelledStorage(context);
    const post = postBy(context, c.communityId);
    // Five members join; three post; Ana leaves; Eve posts while she is away; Ana rejoins; Pete posts.
    for (const member of MEMBERS) await c.membership(member, true, 0);
    await c.posts([post('kim', 1)]);
    await c.posts([post('own', 2)]);
    await c.posts([post('pete', 3)]);
    await c.membership('ana', false, 4);
    await c.posts([post('eve', 5)]);
    await c.membership('ana', true, 6);
    await c.posts([post('pete', 7)]);
    const record = await c.record('ana', 'post');
    expect(actorIdsOf(record)).to.deep.equal(['pete', 'own', 'kim'].map(context.id));
    expect(record).to.include({ actorsCount: 3, lastActionId: context.id('p-pete-7-0') });
    for (const member of MEMBERS) await c.expectModel(member);
  },
);

conformanceCase(
  'leave and rejoin: a leave and a rejoin on time stop the posts of the time away; arriving after the posts, they take none back',
  async (context) => {
    for (const order of ['on time', 'late'] as const) {
      const scoped = within(context, order);
      const c = modelledStorage(scoped);
      const post = postBy(scoped, c.communityId);
      for (const member of MEMBERS) await c.membership(member, true, 0);
      if (order === 'on time') {
        await c.membership('ana', false, 4);
        await c.membership('ana', true, 6);
      }
      for (const one of [post('kim', 1), post('own', 2), post('pete', 3), post('eve', 5), post('pete', 7)])
        await c.posts([one]);
      if (order === 'late') {
        await c.membership('ana', false, 4, NOW + 1);
        await c.membership('ana', true, 6, NOW + 2);
      }
      const record = await c.record('ana', 'post', NOW + 2);
      const [actors, count] = order === 'on time' ? [['pete', 'own', 'kim'], 3] : [['pete', 'eve', 'own'], 4];
      expect(actorIdsOf(record), order).to.deep.equal(actors.map(scoped.id));
      expect(record, order).to.include({ actorsCount: count, lastActionId: scoped.id('p-pete-7-0') });
      await c.expectModel('ana', NOW + 2);
    }
  },
);

conformanceCase(
  'leave and rejoin: a batch of posts reaches a member who left midway only with the posts before the leave',
  async (context) => {
    const c = modelledStorage(context);
    const post = postBy(context, c.communityId);
    for (const member of ['ana', 'kim', 'own']) await c.membership(member, true, 0);
    // Ana leaves halfway through the batch's times; Kim leaves and is back before its last post.
    await c.membership('ana', false, 2, NOW);
    await c.membership('kim', false, 2);
    await c.membership('kim', true, 3, NOW);
    await c.posts([post('pete', 1), post('eve', 1, 30_000), post('own', 2, 30_000), post('sam', 4)]);
    const ana = await c.record('ana', 'post');
    expect(actorIdsOf(ana)).to.deep.equal(['eve', 'pete'].map(context.id));
    expect(ana).to.include({ actorsCount: 2, lastActionId: context.id('p-eve-1-30000') });
    const kim = await c.record('kim', 'post');
    expect(actorIdsOf(kim)).to.deep.equal(['sam', 'eve', 'pete'].map(context.id));
    expect(kim).to.include({ actorsCount: 3 });
    for (const member of ['ana', 'kim', 'own']) await c.expectModel(member);
  },
);

conformanceCase(
  'leave and rejoin: a leave arriving after a batch takes back none of its posts, and stops the posts after it',
  async (context) => {
    const c = modelledStorage(context);
    const post = postBy(context, c.communityId);
    for (const member of ['ana', 'kim']) await c.membership(member, true, 0);
    await c.posts([post('pete', 1), post('eve', 1, 30_000), post('own', 2, 30_000), post('sam', 4)]);
    await c.records('ana');
    await c.apply({
      kind: 'markRead',
      userId: context.id('ana'),
      verb: 'post',
      targetId: c.communityId,
      now: NOW + 1,
    });
    const read = await c.record('ana', 'post', NOW + 1);
    await c.membership('ana', false, 2, NOW + 2);
    // The record stays as it was: actors, latest fields, read flag and change time.
    expect(await c.record('ana', 'post', NOW + 2)).to.deep.equal(read);
    const kim = await c.records('kim', NOW + 3);
    await c.membership('kim', false, 0, NOW + 3);
    expect(await c.records('kim', NOW + 3)).to.deep.equal(kim);
    // Posts processed after the leaves and dated in the time away reach neither.
    await c.posts([post('pete', 5), post('sam', 6)], NOW + 4);
    expect(await c.record('ana', 'post', NOW + 4)).to.deep.equal(read);
    expect(await c.records('kim', NOW + 4)).to.deep.equal(kim);
    for (const member of ['ana', 'kim']) await c.expectModel(member, NOW + 4);
  },
);

conformanceCase(
  'leave and rejoin: a post redelivered after a late leave stays counted once for the member',
  async (context) => {
    const c = modelledStorage(context);
    const post = postBy(context, c.communityId);
    for (const member of ['ana', 'kim']) await c.membership(member, true, 0);
    const first = post('pete', 2);
    await c.posts([first]);
    // Ana's leave at 1 covers Pete's post and is processed after it: it takes nothing back.
    await c.membership('ana', false, 1, NOW + 1);
    const kept = await c.record('ana', 'post', NOW + 1);
    expect(kept).to.include({ actorsCount: 1, lastActionId: context.id('p-pete-2-0') });
    // A redelivery is judged as the post was first processed: before the leave.
    await c.posts([first], NOW + 2);
    expect(await c.record('ana', 'post', NOW + 2)).to.deep.equal(kept);
    // Ana deletes her tray; the post, redelivered, makes her record again, as for any member it
    // first reached, counted once; Eve's post of the batch, processed after the leave and dated in
    // the time away, does not count.
    await c.apply({ kind: 'deleteAll', userId: context.id('ana'), now: NOW + 3 });
    await c.posts([first], NOW + 4);
    await c.posts([first, post('eve', 3)], NOW + 5);
    const again = await c.record('ana', 'post', NOW + 5);
    expect(actorIdsOf(again)).to.deep.equal([context.id('pete')]);
    expect(again).to.include({ actorsCount: 1, lastActionId: context.id('p-pete-2-0') });
    expect(actorIdsOf(await c.record('kim', 'post', NOW + 5))).to.deep.equal(['eve', 'pete'].map(context.id));
    for (const member of ['ana', 'kim']) await c.expectModel(member, NOW + 5);
  },
);

conformanceCase(
  'leave and rejoin: a late leave tells live streams nothing: it neither deletes nor rewrites a record',
  async (context) => {
    const c = modelledStorage(context);
    const post = postBy(context, c.communityId);
    for (const member of ['ana', 'kim']) await c.membership(member, true, 0);
    await c.posts([post('pete', 1), post('sam', 4)]);
    const [ana, kim] = [await c.record('ana', 'post'), await c.record('kim', 'post')];
    if (!ana || !kim) return expect.fail('both members have the post record');
    // One leave job: Ana's after Pete's post (her record shrinks), Kim's before both (hers goes).
    const changes = [
      { communityId: c.communityId, userId: context.id('ana'), active: false, at: at(2) },
      { communityId: c.communityId, userId: context.id('kim'), active: false, at: at(0, 1) },
    ];
    const written: string[] = [];
    const removed: { userId: string; key: string }[] = [];
    await context.storage.writes.applyMemberships(
      changes,
      context.write(NOW + 1, {
        onWritten: async (records) => void written.push(...records.map((r) => `${r.userId} ${r.key}`)),
        onRemoved: async (records) =>
          void removed.push(...records.map(({ userId, key }) => ({ userId, key }))),
      }),
    );
    c.model.apply({ kind: 'membership', changes, now: NOW + 1 });
    expect(await c.records('kim', NOW + 1)).to.deep.equal([kim]);
    // Live streams hear only what these two report.
    expect(removed).to.deep.equal([]);
    expect(written).to.deep.equal([]);
    for (const member of ['ana', 'kim']) await c.expectModel(member, NOW + 1);
  },
);

conformanceCase(
  'leave and rejoin: a post that a late join brought to one member still counts for the members who left after it',
  async (context) => {
    const c = modelledStorage(context);
    const post = postBy(context, c.communityId);
    for (const member of ['ana', 'kim']) await c.membership(member, true, 0);
    await c.posts([post('own', 1)]);
    await c.membership('ana', false, 10);
    // Pete's post is stored, and Sam's join (dated before it) is processed before the post's own
    // fan-out (a fan-out failed and retried, a join on another worker): the join brings the post
    // to Sam alone, then the post goes to the community.
    const late = post('pete', 5);
    await storePostEvents(context.storage, c.communityId, [late], NOW);
    // Beside the model, which knows the post once it is fanned out: what the join tells (Sam's
    // record with Pete's post) is the model's only after that.
    const join = [{ communityId: c.communityId, userId: context.id('sam'), active: true, at: at(0) }];
    await context.storage.writes.applyMemberships(join, context.write(NOW));
    c.model.apply({ kind: 'membership', changes: join, now: NOW });
    await c.posts([late]);
    // Ana left after the post: her record is computed from the kept posts, and the post is one of
    // the community's, not Sam's alone.
    const ana = await c.record('ana', 'post');
    expect(actorIdsOf(ana)).to.deep.equal(['pete', 'own'].map(context.id));
    expect(ana).to.include({ actorsCount: 2, lastActionId: context.id('p-pete-5-0') });
    for (const member of ['ana', 'kim', 'sam']) await c.expectModel(member);
  },
);

/** Every kind of record Ana gets on a community's targets, made by `actor` at `minute`. */
const KINDS: {
  verb: TrayRecord['verb'];
  make: (context: ConformanceContext, actor: string, minute: number, feed: FeedOptions) => Activity;
}[] = [
  {
    verb: 'comment',
    make: (c, actor, minute, feed) =>
      aComment(c.id(actor), ownPost(c), { id: c.id(`cm-${actor}-${minute}`), at: at(minute), ...feed }),
  },
  {
    verb: 'reaction',
    make: (c, actor, minute, feed) =>
      aReaction(c.id(actor), ownPost(c), { id: c.id(`r-${actor}-${minute}`), at: at(minute), ...feed }),
  },
  {
    verb: 'mentreply',
    make: (c, actor, minute, feed) =>
      aReply(c.id(actor), ownComment(c), { id: c.id(`re-${actor}-${minute}`), at: at(minute), ...feed }),
  },
  {
    verb: 'mentreact',
    make: (c, actor, minute, feed) =>
      aCommentReaction(c.id(actor), ownComment(c), {
        id: c.id(`rc-${actor}-${minute}`),
        at: at(minute),
        ...feed,
      }),
  },
  {
    verb: 'mention',
    make: (c, actor, minute, feed) =>
      aMention(
        c.id(actor),
        c.id('ana'),
        { in: 'post', postId: c.id(`pm-${actor}-${minute}`) },
        {
          at: at(minute),
          ...feed,
        },
      ),
  },
  {
    verb: 'mention',
    make: (c, actor, minute, feed) =>
      aMention(
        c.id(actor),
        c.id('ana'),
        { in: 'comment', commentId: c.id(`cmm-${actor}-${minute}`), postId: ownPost(c).postId },
        { at: at(minute), ...feed },
      ),
  },
];

type FeedOptions = { communityId: string } | { userFeed: string };

const ownPost = (c: ConformanceContext) => ({ postId: c.id('p-ana'), owner: c.id('ana') });
const ownComment = (c: ConformanceContext) => ({
  commentId: c.id('cm-ana'),
  owner: c.id('ana'),
  postId: c.id('p-ana'),
});

/** The records of one kind as `actors count` lines (ids without the run's suffix), sorted. */
async function kindSummary(
  c: ModelledStorage,
  context: ConformanceContext,
  verb: TrayRecord['verb'],
  now: number,
) {
  return (await c.records('ana', now))
    .filter((record) => record.verb === verb)
    .map((record) => `${(actorIdsOf(record) ?? []).join(',')} ${record.actorsCount}`)
    .map((line) => line.split(context.id('')).join(''))
    .sort();
}

for (const [index, kind] of KINDS.entries()) {
  const name = kind.verb === 'mention' ? `mention in a ${index === 4 ? 'post' : 'comment'}` : kind.verb;
  conformanceCase(
    `leave and rejoin: a ${name} record stops while away and resumes without the time away; a late leave and rejoin take nothing back`,
    async (context) => {
      for (const order of ['on time', 'late'] as const) {
        const scoped = within(context, order);
        const c = modelledStorage(scoped);
        const feed = { communityId: c.communityId };
        const act = (actor: string, minute: number) => c.personal([kind.make(scoped, actor, minute, feed)]);
        await c.membership('ana', true, 0);
        if (order === 'on time') {
          await act('ben', 1);
          await c.membership('ana', false, 2);
          await act('cid', 3);
          await c.membership('ana', true, 4);
          await act('dee', 5);
        } else {
          // Every action first, the leave and the rejoin after them.
          for (const [actor, minute] of [
            ['ben', 1],
            ['cid', 3],
            ['dee', 5],
          ] as const)
            await act(actor, minute);
          await c.membership('ana', false, 2, NOW + 1);
          await c.membership('ana', true, 4, NOW + 2);
        }
        const expected =
          order === 'on time'
            ? kind.verb === 'mention'
              ? ['ben 1', 'dee 1']
              : ['dee,ben 2']
            : kind.verb === 'mention'
              ? ['ben 1', 'cid 1', 'dee 1']
              : ['dee,cid,ben 3'];
        expect(await kindSummary(c, scoped, kind.verb, NOW + 2), order).to.deep.equal(expected);
        await c.expectModel('ana', NOW + 2);
      }
      // On a user's feed the community's memberships change nothing.
      const scoped = within(context, 'feed');
      const c = modelledStorage(scoped);
      const feed = { userFeed: scoped.id('ana') };
      await c.membership('ana', true, 0);
      await c.membership('ana', false, 2);
      for (const [actor, minute] of [
        ['ben', 1],
        ['cid', 3],
      ] as const)
        await c.personal([kind.make(scoped, actor, minute, feed)]);
      const expected = kind.verb === 'mention' ? ['ben 1', 'cid 1'] : ['cid,ben 2'];
      expect(await kindSummary(c, scoped, kind.verb, NOW)).to.deep.equal(expected);
      await c.expectModel('ana');
    },
  );
}

// A late leave takes nothing back, and no later computation may either: a join arriving after it
// (a platform's retry of an old join) made every later computation of the record count the
// action as away, so an older comment arriving next dropped Ben from the record.
conformanceCase(
  'leave and rejoin: a join arriving after a late leave takes back none of what the leave left counted',
  async (context) => {
    const c = modelledStorage(context);
    const feed = { communityId: c.communityId };
    const comment = (actor: string, minute: number) =>
      aComment(context.id(actor), ownPost(context), {
        id: context.id(`cm-${actor}-${minute}`),
        at: at(minute),
        ...feed,
      });
    // Nothing is known of Ana's membership yet: Ben's comment counts.
    await c.personal([comment('ben', 6)]);
    // Her leave, dated before the comment, arrives after it.
    await c.membership('ana', false, 5, NOW + 1);
    // Her join, dated before both, arrives last; then Dee's comment, dated while she was a member.
    await c.membership('ana', true, 0, NOW + 2);
    await c.personal([comment('dee', 4)]);
    const record = (await c.records('ana', NOW + 2)).find((one) => one.verb === 'comment');
    expect(actorIdsOf(record)).to.deep.equal(['ben', 'dee'].map(context.id));
    expect(record).to.include({ actorsCount: 2, lastActionId: context.id('cm-ben-6') });
    await c.expectModel('ana', NOW + 2);
  },
);
