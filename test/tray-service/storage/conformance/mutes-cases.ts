import { expect } from 'chai';
import { isDeepStrictEqual } from 'node:util';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import {
  MAX_MUTES_IN_FORCE,
  muteInForceAt,
  type Mute,
  type MuteTargetType,
} from '../../../../tray-service/domain/mute.ts';
import {
  LATEST_MUTE_UNTIL,
  muteChangeTime,
  muteInForce,
  putMute as putMuteIn,
  removeMute as removeMuteIn,
  type MuteTarget,
} from '../../../../tray-service/domain/mute-changes.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import {
  aComment,
  aCommentReaction,
  aMention,
  aPost,
  aReaction,
  aReply,
} from '../../../support/activity-builder.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { actorIdsOf, at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { inboxOf } from './inbox-operation.ts';
import { modelledStorage, type ModelledStorage } from './modelled-storage.ts';

// Mutes in the deliveries (docs/tray-rules.md#inbox) against the reference tray: what a mute in
// force at an action's time covers makes and changes nothing for its owner, whenever it arrives,
// and no later write or recomputation counts it. Each case asserts the records themselves and
// that every tray it touched is the model's.

/** The owner's mute of a target put on the tray's clock `now` (until removed, or `until`). */
function mute(
  tray: ModelledStorage,
  userId: string,
  targetType: MuteTargetType,
  targetId: string,
  now: number,
  until: number | null = null,
) {
  return tray.apply({ kind: 'mute', userId, target: { targetType, targetId }, until, now });
}

function unmute(
  tray: ModelledStorage,
  userId: string,
  targetType: MuteTargetType,
  targetId: string,
  now: number,
) {
  return tray.apply({ kind: 'unmute', userId, target: { targetType, targetId }, now });
}

async function expectAll(tray: ModelledStorage, users: readonly string[], now = NOW) {
  for (const user of users) await tray.expectModel(user, now);
}

/** The case's tray with `members` joined from minute 0, its ids, Ana's id and its community. */
async function withMembers(context: ConformanceContext, members = ['u-ana', 'u-kim', 'u-ben']) {
  const tray = modelledStorage(context);
  for (const member of members) await tray.membership(member, true, 0);
  return { tray, id: context.id, ana: context.id('u-ana'), communityId: tray.communityId };
}

/**
 * The case's tray and comments on Ana's post p-1 on her own feed, where no membership is involved,
 * only mutes: `commentOf(actor, minute)` is the actor's comment `cm-<actor>-<minute>`.
 */
function onAnasFeed(context: ConformanceContext) {
  const id = context.id;
  const ana = id('u-ana');
  const post = { postId: id('p-1'), owner: ana };
  const commentOf = (actor: string, minute: number) =>
    aComment(id(actor), post, { id: id(`cm-${actor}-${minute}`), at: at(minute), userFeed: ana });
  return { tray: modelledStorage(context), id, ana, commentOf };
}

/** The user's record of this verb and target, if any. */
async function recordOf(
  tray: ModelledStorage,
  context: ConformanceContext,
  user: string,
  verb: TrayRecord['verb'],
  target: string,
  now = NOW,
) {
  return (await tray.records(user, now)).find(
    (record) => record.verb === verb && record.targetId === context.id(target),
  );
}

conformanceCase(
  'mutes: a post mute holds back comments, replies and reactions on it; a mention in it still arrives',
  async (context) => {
    const tray = modelledStorage(context);
    const id = context.id;
    const ana = id('u-ana');
    const post = { postId: id('p-1'), owner: ana };
    const comment = { commentId: id('cm-ana'), owner: ana, postId: id('p-1') };
    const communityId = tray.communityId;
    await tray.personal([aComment(id('u-ben'), post, { id: id('cm-1'), at: at(1), communityId })]);
    await mute(tray, ana, 'post', id('p-1'), at(2));
    await tray.personal([
      aComment(id('u-cy'), post, { id: id('cm-2'), at: at(3), communityId }),
      aReaction(id('u-dee'), post, { id: id('r-1'), at: at(3), communityId }),
      aReply(id('u-eve'), comment, { id: id('cm-3'), at: at(4), communityId }),
      aCommentReaction(id('u-eve'), comment, { id: id('r-2'), at: at(4), communityId }),
      aMention(
        id('u-fay'),
        ana,
        { in: 'comment', commentId: id('cm-4'), postId: id('p-1') },
        {
          at: at(5),
          communityId,
        },
      ),
      aComment(id('u-cy'), { postId: id('p-2'), owner: ana }, { id: id('cm-5'), at: at(3), communityId }),
    ]);
    const records = await tray.records('u-ana');
    expect(records.map((record) => [record.verb, record.targetId])).to.have.deep.members([
      ['comment', id('p-1')],
      ['mention', id('cm-4')],
      ['comment', id('p-2')],
    ]);
    const muted = await recordOf(tray, context, 'u-ana', 'comment', 'p-1');
    expect(actorIdsOf(muted)).to.deep.equal([id('u-ben')]);
    expect(muted).to.include({ actorsCount: 1, lastActionId: id('cm-1') });
    await expectAll(tray, ['u-ana']);
  },
  { needs: 'inbox' },
);

conformanceCase(
  "mutes: a community post muted before it came is never counted in the member's post record",
  async (context) => {
    const { tray, id, communityId } = await withMembers(context);
    // Muting a target the tray has not seen yet is allowed (its post arrives later).
    await mute(tray, id('u-ana'), 'post', id('p-kim'), at(0));
    await tray.posts([aPost(id('u-kim'), { id: id('p-kim'), at: at(2), communityId })]);
    expect(await tray.record('u-ana', 'post')).to.equal(undefined);
    // An earlier post delivered later: the record counts from before Kim's, and still not Kim's.
    await tray.posts([aPost(id('u-ben'), { id: id('p-ben'), at: at(1), communityId })]);
    const record = await tray.record('u-ana', 'post');
    expect(actorIdsOf(record)).to.deep.equal([id('u-ben')]);
    expect(record).to.include({ actorsCount: 1, lastActionId: id('p-ben') });
    await expectAll(tray, ['u-ana', 'u-kim', 'u-ben']);
  },
  { needs: 'inbox' },
);

conformanceCase(
  "mutes: a community mute holds back the community's posts and everything on them; a mention and the user feed still arrive",
  async (context) => {
    const { tray, id, ana, communityId } = await withMembers(context);
    const postOf = (author: string, minute: number) =>
      aPost(id(author), { id: id(`p-${author}-${minute}`), at: at(minute), communityId });
    await tray.posts([postOf('u-kim', 1)]);
    await mute(tray, ana, 'community', communityId, at(2));
    await tray.posts([postOf('u-ben', 3)]);
    // Several posts in one fan-out: each member takes those they were there for and not muted.
    await tray.posts([postOf('u-kim', 4), postOf('u-ben', 4)]);
    const anasPost = { postId: id('p-ana'), owner: ana };
    await tray.personal([
      aComment(id('u-ben'), anasPost, { id: id('cm-1'), at: at(5), communityId }),
      aReaction(id('u-kim'), anasPost, { id: id('r-1'), at: at(5), communityId }),
      aMention(id('u-ben'), ana, { in: 'post', postId: id('p-ben-3') }, { at: at(3), communityId }),
      aComment(
        id('u-ben'),
        { postId: id('p-feed'), owner: ana },
        { id: id('cm-2'), at: at(5), userFeed: ana },
      ),
    ]);
    const post = await tray.record('u-ana', 'post');
    expect(actorIdsOf(post)).to.deep.equal([id('u-kim')]);
    expect(post).to.include({ actorsCount: 1, lastActionId: id('p-u-kim-1') });
    expect((await tray.records('u-ana')).map((record) => record.verb)).to.have.members([
      'post',
      'mention',
      'comment',
    ]);
    expect(actorIdsOf(await tray.record('u-kim', 'post'))).to.deep.equal([id('u-ben')]);
    await expectAll(tray, ['u-ana', 'u-kim', 'u-ben']);
  },
  { needs: 'inbox' },
);

conformanceCase(
  "mutes: a user mute silences every action of that actor, mentions included, and leaves the others'",
  async (context) => {
    const { tray, id, ana, communityId } = await withMembers(context);
    await mute(tray, ana, 'user', id('u-ben'), at(0));
    const post = { postId: id('p-1'), owner: ana };
    await tray.personal([
      aComment(id('u-ben'), post, { id: id('cm-1'), at: at(1), communityId }),
      aMention(id('u-ben'), ana, { in: 'post', postId: id('p-2') }, { at: at(2), communityId }),
      aComment(id('u-cy'), post, { id: id('cm-2'), at: at(3), communityId }),
    ]);
    await tray.posts([aPost(id('u-ben'), { id: id('p-3'), at: at(4), communityId })]);
    await tray.posts([aPost(id('u-kim'), { id: id('p-4'), at: at(5), communityId })]);
    const comment = await tray.record('u-ana', 'comment');
    expect(actorIdsOf(comment)).to.deep.equal([id('u-cy')]);
    expect(comment).to.include({ actorsCount: 1, lastActionId: id('cm-2') });
    expect(await tray.record('u-ana', 'mention')).to.equal(undefined);
    expect(actorIdsOf(await tray.record('u-ana', 'post'))).to.deep.equal([id('u-kim')]);
    await expectAll(tray, ['u-ana', 'u-kim']);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'mutes: unmuting resumes without what happened while muted, and a late delivery dated inside the ended span stays held back',
  async (context) => {
    const { tray, id, ana, commentOf } = onAnasFeed(context);
    await tray.personal([commentOf('u-ben', 1)]);
    await mute(tray, ana, 'post', id('p-1'), at(2));
    await tray.personal([commentOf('u-cy', 3), commentOf('u-ben', 3)]);
    await unmute(tray, ana, 'post', id('p-1'), at(4));
    await tray.personal([commentOf('u-dee', 5)]);
    let record = await tray.record('u-ana', 'comment');
    expect(actorIdsOf(record)).to.deep.equal([id('u-dee'), id('u-ben')]);
    expect(record?.actors.map((actor) => actor.at)).to.deep.equal([at(5), at(1)]);
    expect(record).to.include({ actorsCount: 2, lastActionId: id('cm-u-dee-5') });
    // Delivered after the unmute (retries, the spool), dated while muted: still nothing.
    await tray.personal([commentOf('u-eve', 3)], NOW + 1);
    record = await tray.record('u-ana', 'comment', NOW + 1);
    expect(actorIdsOf(record)).to.deep.equal([id('u-dee'), id('u-ben')]);
    // A span that ends by itself (until) ends the same way; the community's post record too.
    const { communityId } = tray;
    for (const member of ['u-ana', 'u-kim', 'u-ben', 'u-pete'])
      await tray.membership(member, true, 0, NOW + 2);
    await mute(tray, ana, 'community', communityId, at(2), at(4));
    for (const [author, minute] of [
      ['u-kim', 1],
      ['u-ben', 3],
      ['u-pete', 5],
    ] as const)
      await tray.posts([aPost(id(author), { id: id(`p-${author}`), at: at(minute), communityId })], NOW + 2);
    const posts = await tray.record('u-ana', 'post', NOW + 2);
    expect(actorIdsOf(posts)).to.deep.equal([id('u-pete'), id('u-kim')]);
    await expectAll(tray, ['u-ana', 'u-kim'], NOW + 2);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'mutes: a late join computes the records again without what mutes held back; a late leave takes nothing back',
  async (context) => {
    const tray = modelledStorage(context);
    const id = context.id;
    const ana = id('u-ana');
    const { communityId } = tray;
    for (const member of ['u-kim', 'u-ben', 'u-pete']) await tray.membership(member, true, 0);
    await mute(tray, ana, 'user', id('u-ben'), at(0));
    for (const [author, minute] of [
      ['u-kim', 2],
      ['u-ben', 3],
      ['u-pete', 6],
    ] as const)
      await tray.posts([aPost(id(author), { id: id(`p-${author}`), at: at(minute), communityId })]);
    // Ana's own post in the community: comments addressed to her while she was not yet known.
    const anasPost = { postId: id('p-ana'), owner: ana };
    await tray.personal([
      aComment(id('u-cy'), anasPost, { id: id('cm-1'), at: at(2), communityId }),
      aComment(id('u-ben'), anasPost, { id: id('cm-2'), at: at(3), communityId }),
      aComment(id('u-kim'), anasPost, { id: id('cm-3'), at: at(6), communityId }),
    ]);
    // Her join at minute 1 arrives late: the backfill leaves out Ben's post and comment.
    await tray.membership('u-ana', true, 1, NOW + 1);
    let post = await recordOf(tray, context, 'u-ana', 'post', 'c-hike', NOW + 1);
    expect(actorIdsOf(post)).to.deep.equal([id('u-pete'), id('u-kim')]);
    await expectAll(tray, ['u-ana'], NOW + 1);
    // Her leave at minute 5 arrives late too: Pete's post and Kim's comment, processed before it,
    // stay; Ben's post and comment stay held back.
    await tray.membership('u-ana', false, 5, NOW + 2);
    post = await recordOf(tray, context, 'u-ana', 'post', 'c-hike', NOW + 2);
    expect(actorIdsOf(post)).to.deep.equal([id('u-pete'), id('u-kim')]);
    const comment = await tray.record('u-ana', 'comment', NOW + 2);
    expect(actorIdsOf(comment)).to.deep.equal([id('u-kim'), id('u-cy')]);
    await expectAll(tray, ['u-ana', 'u-kim', 'u-ben'], NOW + 2);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'mutes: a removal computes the record again without what a mute held back',
  async (context) => {
    const { tray, id, ana, commentOf } = onAnasFeed(context);
    await mute(tray, ana, 'user', id('u-cy'), at(2), at(4));
    await tray.personal([commentOf('u-ben', 1), commentOf('u-cy', 3), commentOf('u-dee', 5)]);
    await tray.apply({
      kind: 'removal',
      removals: [{ kind: 'comment', id: id('cm-u-dee-5'), postId: id('p-1'), at: NOW + 1 }],
      now: NOW + 1,
    });
    const record = await tray.record('u-ana', 'comment', NOW + 1);
    expect(actorIdsOf(record)).to.deep.equal([id('u-ben')]);
    expect(record).to.include({ actorsCount: 1, lastActionId: id('cm-u-ben-1') });
    await expectAll(tray, ['u-ana'], NOW + 1);
  },
  { needs: 'removals' },
);

// A request's time is read before it waits for the user's lock (a pool, another instance's
// clock): one that acts later with an earlier time found no span in force at it and started a
// second, or ended none, as no order of the two requests would.
conformanceCase(
  'mutes: a PUT or DELETE acting after another of the target with an earlier time acts as of that one',
  async (context) => {
    const { id } = context;
    const inbox = inboxOf(context.storage);
    const ana = id('u-ana');
    const post = { targetType: 'post' as const, targetId: id('p-clock') };
    const inForce = async (at: number) =>
      (await inbox.mutesInForce(ana, at)).filter((mute) => mute.targetId === post.targetId);
    // Two PUTs at once: the one stamped NOW + 10 acts first.
    await inbox.putMute(ana, post, null, NOW + 10, RETENTION_DAYS, MAX_MUTES_IN_FORCE);
    const second = await inbox.putMute(ana, post, NOW + 1_000, NOW, RETENTION_DAYS, MAX_MUTES_IN_FORCE);
    expect(second).to.include({ createdAt: NOW + 10, until: NOW + 1_000 });
    expect(await inForce(NOW + 20)).to.have.length(1);
    // A DELETE stamped before the span began still ends it.
    expect(await inbox.removeMute(ana, post, NOW + 5, RETENTION_DAYS)).to.equal(true);
    expect(await inForce(NOW + 20)).to.deep.equal([]);
    // A PUT stamped before that removal starts a span again, after it.
    const again = await inbox.putMute(ana, post, null, NOW + 1, RETENTION_DAYS, MAX_MUTES_IN_FORCE);
    expect(again).to.include({ createdAt: NOW + 10, until: null, removedAt: null });
    expect(await inForce(NOW + 20)).to.have.length(1);
  },
);

conformanceCase(
  'mutes: a new span of a target with the limit of spans in force or ended within the retention changes nothing, until the oldest ended longer ago',
  async (context) => {
    const { id } = context;
    // Its own database: the purge below is of the whole store.
    const storage = await context.isolated();
    const inbox = inboxOf(storage);
    const ana = id('u-ana');
    const LIMIT = 3;
    const post = { targetType: 'post' as const, targetId: id('p-loop') };
    const put = (target: MuteTarget, now: number, until: number | null = null) =>
      inbox.putMute(ana, target, until, now, RETENTION_DAYS, MAX_MUTES_IN_FORCE, LIMIT);
    const spans = async () => (await storage.communityMembers.muteSpansOn([ana], [post])).length;

    // Three spans: two ended (removed; by their until), one in force.
    await put(post, NOW);
    await inbox.removeMute(ana, post, NOW + 1, RETENTION_DAYS);
    await put(post, NOW + 2, NOW + 3);
    expect(await put(post, NOW + 4)).to.include({ createdAt: NOW + 4 });
    // In force: a PUT changes its end, whatever the count.
    expect(await put(post, NOW + 5, NOW + 6)).to.include({ createdAt: NOW + 4, until: NOW + 6 });
    expect(await spans()).to.equal(LIMIT);
    // Ended, all three kept: a new span is refused and changes nothing.
    expect(await put(post, NOW + 7)).to.equal('too many spans');
    expect(await inbox.mutesInForce(ana, NOW + 7)).to.deep.equal([]);
    expect(await spans()).to.equal(LIMIT);
    // Another target is another count.
    expect(await put({ targetType: 'user', targetId: id('u-ben') }, NOW + 7)).to.include({
      createdAt: NOW + 7,
    });
    // The limit counts the spans in force or ended within the retention: until the first span
    // (ended at NOW + 1) ended longer ago than that, a new one is refused; then one starts, though
    // the first is still stored. A span is kept past that while a record of the user counts from
    // before its end, which an active community's `post` record does for good: counted while
    // stored, the target could never be muted again.
    const later = NOW + 1 + RETENTION_DAYS * DAY_MS + 1;
    expect(await put(post, later - 2)).to.equal('too many spans');
    expect(await put(post, later)).to.include({ createdAt: later, until: null });
    expect(await spans()).to.equal(LIMIT + 1);
    // The purge takes the ended ones no record of Ana's needs (a purge may leave what expired
    // within the last hours: a day on, all three); the one in force stays.
    const purged = later + DAY_MS;
    await storage.purgeExpired(new Date(purged));
    expect(await spans()).to.equal(1);
    expect(
      (await inbox.mutesInForce(ana, purged)).filter((mute) => mute.targetType === 'post'),
    ).to.deep.equal([{ userId: ana, ...post, createdAt: later, until: null, removedAt: null }]);
  },
  { needs: 'inbox' },
);

// Each unmute, or mute whose `until` passed, leaves its span stored (a late delivery dated inside it
// stays held back), and a user with a long-lived record keeps them all: muting new targets for a
// moment in a loop grew one user's spans without bound, and every delivery to them, every list of
// their mutes and every PUT read them all.
conformanceCase(
  'mutes: a new span past the limit of the user’s spans in force or ended within the retention changes nothing, until the oldest ended longer ago',
  async (context) => {
    const { id } = context;
    const storage = await context.isolated();
    const inbox = inboxOf(storage);
    const ana = id('u-ana');
    const LIMIT = 3;
    const target = (n: number) => ({ targetType: 'post' as const, targetId: id(`p-brief-${n}`) });
    const put = (n: number, now: number, until: number | null = null) =>
      inbox.putMute(ana, target(n), until, now, RETENTION_DAYS, MAX_MUTES_IN_FORCE, 100, LIMIT);
    // Three targets, each muted for a millisecond: three spans ended, none in force.
    for (const n of [1, 2, 3]) expect(await put(n, NOW + n, NOW + n + 1)).to.include({ createdAt: NOW + n });
    expect(await inbox.mutesInForce(ana, NOW + 10)).to.deep.equal([]);
    expect(await put(4, NOW + 10)).to.equal('too many user spans');
    expect(await inbox.mutesInForce(ana, NOW + 10)).to.deep.equal([]);
    // Another user is another count.
    expect(
      await inbox.putMute(
        id('u-ben'),
        target(4),
        null,
        NOW + 10,
        RETENTION_DAYS,
        MAX_MUTES_IN_FORCE,
        100,
        LIMIT,
      ),
    ).to.include({ createdAt: NOW + 10 });
    // Once the first ended longer ago than the retention, a new one starts.
    const later = NOW + 2 + RETENTION_DAYS * DAY_MS + 1;
    expect(await put(4, later - 2)).to.equal('too many user spans');
    expect(await put(4, later)).to.include({ createdAt: later, until: null });
    // In force: a PUT changes its end, whatever the count.
    expect(await put(4, later + 1, later + 5)).to.include({ createdAt: later, until: later + 5 });
  },
  { needs: 'inbox' },
);

conformanceCase(
  'mutes: a new mute past the limit in force changes nothing; PUTs at once from two processes never take the user past it',
  async (context) => {
    const { storage, id } = context;
    const peer = await context.peer();
    const ana = id('u-ana');
    // A small limit of the port's own, so the race is over a few places, not a thousand mutes.
    const LIMIT = 3;
    const put = (via: TrayStorage, target: string, now: number, until: number | null = null) =>
      inboxOf(via).putMute(
        ana,
        { targetType: 'post', targetId: id(target) },
        until,
        now,
        RETENTION_DAYS,
        LIMIT,
      );
    const inForce = async (now: number) =>
      (await inboxOf(storage).mutesInForce(ana, now)).map((mute) => mute.targetId);

    await put(storage, 'p-first', at(0));
    const racing = Array.from({ length: 12 }, (_, n) => `p-race-${n}`);
    const outcomes = await Promise.all(
      racing.map((target, n) => put(n % 2 === 0 ? storage : peer, target, at(1))),
    );
    expect(outcomes.filter((outcome) => outcome === 'too many')).to.have.length(racing.length - (LIMIT - 1));
    const won = racing.filter((_, n) => outcomes[n] !== 'too many').map(id);
    expect(await inForce(at(1))).to.have.members([id('p-first'), ...won]);

    // At the limit: a PUT of a mute in force still changes its end, a new one changes nothing...
    expect(await put(storage, 'p-first', at(2), at(3))).to.include({ createdAt: at(0), until: at(3) });
    expect(await put(peer, 'p-late', at(2))).to.equal('too many');
    expect(await inForce(at(2))).to.have.members([id('p-first'), ...won]);
    // ...until one ends (by its `until` here, or removed): ended spans do not count.
    expect(await put(peer, 'p-late', at(3))).to.include({ createdAt: at(3), until: null });
    expect(await inForce(at(3))).to.have.members([...won, id('p-late')]);
  },
  { needs: 'inbox' },
);

/**
 * One PUT of a user's mute and one DELETE of it at once, and what the two acknowledged: the stored
 * spans, as every time around them sees them, and both answers must be those of one of the two
 * serial orders, computed by the domain's rules (mute-changes.ts) from the spans before.
 */
function serialOrders(
  spans: readonly Mute[],
  userId: string,
  target: MuteTarget,
  put: { until: number | null; now: number },
  removeAt: number,
) {
  const putFirst = putMuteIn(spans, userId, target, put.until, put.now);
  const thenRemoved = removeMuteIn(putFirst, target, removeAt);
  const removedFirst = removeMuteIn(spans, target, removeAt);
  const thenPut = putMuteIn(removedFirst.mutes, userId, target, put.until, put.now);
  return [
    {
      order: 'PUT, DELETE',
      spans: thenRemoved.mutes,
      // The span the PUT answers: in force when it took effect (muteChangeTime).
      put: muteInForce(putFirst, target, muteChangeTime(spans, target, put.now)),
      ...thenRemoved,
    },
    {
      order: 'DELETE, PUT',
      spans: thenPut,
      put: muteInForce(thenPut, target, muteChangeTime(removedFirst.mutes, target, put.now)),
      removed: removedFirst.removed,
    },
  ];
}

conformanceCase(
  'mutes: a PUT and a DELETE of one mute at once end as one serial order of the two, and a DELETE after a PUT leaves no mute',
  async (context) => {
    const { storage, id } = context;
    const peer = await context.peer();
    // Users side by side, each racing its own mute round after round: a DELETE whose write lands
    // between a PUT's read of the span and its write must not be undone by that write.
    const USERS = 12;
    const ROUNDS = 4;
    // Each user at the limit with the raced mute alone: neither order refuses the PUT (it ends
    // the span, or the span is gone before it), so a PUT that counts the span a DELETE is ending
    // and answers 'too many' is no serial order either.
    const LIMIT = 1;
    const race = async (n: number) => {
      const user = id(`u-racer-${n}`);
      const target: MuteTarget = { targetType: 'post', targetId: id(`p-raced-${n}`) };
      // The DELETE's clock a millisecond after the PUT's (both orders end alike) or before it (a
      // DELETE first ends the span, so the PUT starts another): both kinds of race.
      const removeAfter = n % 2 === 0 ? 1 : -1;
      let spans: Mute[] = [];
      const inForceOver = async (times: readonly number[]) =>
        Promise.all(
          times.map(async (time) =>
            (await inboxOf(storage).mutesInForce(user, time)).filter(
              (mute) => mute.targetId === target.targetId,
            ),
          ),
        );
      const modelOver = (model: readonly Mute[], times: readonly number[]) =>
        times.map((time) =>
          model.filter((mute) => mute.targetId === target.targetId && muteInForceAt(mute, time)),
        );
      for (let round = 0; round < ROUNDS; round += 1) {
        const start = at(10 * round);
        // Every time a span of the round can start or end at, and one between.
        const times = [0, 9, 10, 11, 15, 20, 21].map((ms) => start + ms);
        // The mute in force before the race (a new span, or the one a DELETE, PUT order left).
        const before = await inboxOf(storage).putMute(user, target, null, start, RETENTION_DAYS, LIMIT);
        spans = putMuteIn(spans, user, target, null, start);
        expect(before).to.deep.equal(muteInForce(spans, target, start));

        const put = { until: at(10 * round + 5), now: start + 10 };
        const removeAt = put.now + removeAfter;
        const [putAnswer, removed] = await Promise.all([
          inboxOf(round % 2 === 0 ? storage : peer).putMute(
            user,
            target,
            put.until,
            put.now,
            RETENTION_DAYS,
            LIMIT,
          ),
          inboxOf(round % 2 === 0 ? peer : storage).removeMute(user, target, removeAt, RETENTION_DAYS),
        ]);
        const seen = { spans: await inForceOver(times), put: putAnswer, removed };
        const orders = serialOrders(spans, user, target, put, removeAt);
        const matching = orders.find(
          (order) =>
            isDeepStrictEqual(seen.spans, modelOver(order.spans, times)) &&
            isDeepStrictEqual(seen.put, order.put) &&
            seen.removed === order.removed,
        );
        // A span as [start, until, removed] in ms after the round's start: a message one can read.
        const brief = (mute: Mute | 'too many' | 'too many spans' | 'too many user spans' | undefined) =>
          typeof mute === 'object'
            ? [mute.createdAt, mute.until, mute.removedAt].map((t) => t && t - start)
            : mute;
        const inForceBrief = (over: readonly Mute[][]) =>
          JSON.stringify(over.map((mutes, k) => [`+${(times[k] ?? 0) - start}`, ...mutes.map(brief)]));
        expect(
          matching,
          `user ${n}, round ${round}: DELETE answered ${removed}, PUT ${JSON.stringify(brief(putAnswer))}, ` +
            `in force [at, [start, until, removed]]: ${inForceBrief(seen.spans)}; no serial order: ` +
            orders
              .map(
                (order) =>
                  `${order.order} ${JSON.stringify(brief(order.put))} ${inForceBrief(modelOver(order.spans, times))}`,
              )
              .join(', '),
        ).to.not.equal(undefined);
        spans = matching?.spans ?? spans;

        // Both answered: a DELETE now leaves no mute of the target in force.
        const after = start + 20;
        await inboxOf(round % 2 === 0 ? peer : storage).removeMute(user, target, after, RETENTION_DAYS);
        spans = removeMuteIn(spans, target, after).mutes;
        expect(await inForceOver(times), `user ${n}, round ${round}, after`).to.deep.equal(
          modelOver(spans, times),
        );
        expect(await inForceOver([after])).to.deep.equal([[]]);
      }
    };
    await Promise.all(Array.from({ length: USERS }, (_, n) => race(n)));
  },
  { needs: 'inbox', timeout: 60_000 },
);

conformanceCase(
  'mutes: a span ending as late as a time can be is kept through the purge, never dated past the end of time',
  async (context) => {
    const storage = await context.isolated();
    const inbox = inboxOf(storage);
    const user = context.id('u-ana');
    // The latest end a caller may ask for, and the largest time a Date holds: an end plus the
    // spans' retention past it must still keep the span, not date its expiry nowhere.
    const untils = [LATEST_MUTE_UNTIL, 8_640_000_000_000_000];
    for (const [n, until] of untils.entries()) {
      const target = { targetType: 'post' as const, targetId: context.id(`p-${n}`) };
      await inbox.putMute(user, target, until, NOW, RETENTION_DAYS, MAX_MUTES_IN_FORCE);
    }
    await storage.purgeExpired(new Date(NOW + DAY_MS));
    expect((await inbox.mutesInForce(user, NOW + 1)).map((mute) => mute.until)).to.deep.equal(untils);
  },
  { needs: 'inbox' },
);

// A mute of the actor has every later write to the record counted exactly,
// and with the actor's newest actions all held back by it, the one from before the mute was no
// longer among the kept copies.
conformanceCase(
  'mutes: an actor muted after their first comment stays counted by it through 17 held-back comments',
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    // After NOW, so the mute (dated by the tray's clock) starts between Ben's first comment and the rest.
    const late = (minute: number) => 1_440 + minute;
    const post = { postId: context.id('p-1'), owner: ana };
    const comment = (actor: string, minute: number) =>
      aComment(context.id(actor), post, { id: context.id(`cm-${actor}-${minute}`), at: at(minute) });
    await tray.personal([comment('u-ben', late(1))], at(late(1), 1_000));
    await tray.apply({
      kind: 'mute',
      userId: ana,
      target: { targetType: 'user', targetId: context.id('u-ben') },
      until: null,
      now: at(late(2)),
    });
    for (let minute = 3; minute <= 19; minute++) {
      await tray.personal([comment('u-ben', late(minute))], at(late(minute), 1_000));
    }
    await tray.personal([comment('u-cy', late(30))], at(late(30), 1_000));
    const now = at(late(31));
    const record = await tray.record('u-ana', 'comment', now);
    expect(record, 'the record').to.deep.include({ actorsCount: 2 });
    expect(actorIdsOf(record)).to.deep.equal([context.id('u-cy'), context.id('u-ben')]);
    await tray.expectModel('u-ana', now);
  },
);
