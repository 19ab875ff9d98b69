import { expect } from 'chai';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { muteInForceAt } from '../../../../tray-service/domain/mute.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';
import type { TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import { aComment, aMention, aPost, aReaction } from '../../../support/activity-builder.ts';
import { applyOperation, RETENTION_DAYS } from './apply-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { applyInboxOperation, inboxOf, isInboxOperation } from './inbox-operation.ts';
import { modelInboxSnapshot, storageInboxSnapshot } from './inbox-snapshot.ts';
import { manyUsersCountDifferences } from './many-users-counts.ts';
import { modelledStorage, type ModelledStorage } from './modelled-storage.ts';
import { differences } from './tray-snapshot.ts';

// The inbox port (docs/tray-rules.md#inbox) against the reference tray: marks, views, counts,
// wake-ups and mutes. Each case needs the inbox port (conformance-adapters.ts capabilities).

/** Applies to both and, for a mark, expects the storage's `updated` to be the model's. */
async function both(
  tray: ModelledStorage,
  context: ConformanceContext,
  operation: TrayOperation,
): Promise<number> {
  const expected = tray.model.apply(operation);
  if (!isInboxOperation(operation)) {
    await applyOperation(context.storage, operation, context.write);
    return expected;
  }
  const updated = await applyInboxOperation(context.storage, operation);
  expect(updated, `${operation.kind} updated`).to.equal(expected);
  return updated;
}

/** The user's platform tray and every inbox view and count equal the model's. */
async function expectInbox(tray: ModelledStorage, context: ConformanceContext, user: string, now: number) {
  await tray.expectModel(user, now);
  const userId = context.id(user);
  const found = differences(
    await storageInboxSnapshot(context.storage, userId, now),
    modelInboxSnapshot(tray.model, userId, now),
  );
  if (found.length > 0) expect.fail(`${userId}'s inbox differs from the model:\n${found.join('\n')}`);
}

/** Ana's tray of three records (a comment, a reaction, a mention) and Ben's one. */
async function seeded(context: ConformanceContext) {
  const tray = modelledStorage(context);
  const ana = context.id('u-ana');
  const ben = context.id('u-ben');
  const post = { postId: context.id('p-1'), owner: ana };
  await tray.personal([
    aComment(context.id('u-cy'), post, { id: context.id('cm-1'), at: at(1) }),
    aReaction(context.id('u-dee'), post, { id: context.id('r-1'), at: at(2) }),
    aMention(context.id('u-eve'), ana, { in: 'post', postId: context.id('p-2') }, { at: at(3) }),
    aComment(
      context.id('u-cy'),
      { postId: context.id('p-3'), owner: ben },
      { id: context.id('cm-3'), at: at(4) },
    ),
  ]);
  const key = (verb: 'comment' | 'reaction' | 'mention', targetId: string, userId = ana) =>
    encodeRecordKey({ verb, targetId: context.id(targetId), userId });
  return {
    tray,
    ana,
    ben,
    comment: key('comment', 'p-1'),
    reaction: key('reaction', 'p-1'),
    mention: key('mention', 'p-2'),
    bens: key('comment', 'p-3', ben),
  };
}

/** v2/read of Ana's comment record (seeded). */
const readComment = (context: ConformanceContext, ana: string, now: number): TrayOperation => ({
  kind: 'markRead',
  userId: ana,
  verb: 'comment',
  targetId: context.id('p-1'),
  now,
});

conformanceCase(
  "inbox: seen marks by ids (each once, another user's and unknown keys ignored) and all, counting what changed",
  async (context) => {
    const { tray, ana, comment, bens } = await seeded(context);
    const seen = (ids: readonly string[] | 'all', now: number) =>
      both(tray, context, { kind: 'seen', userId: ana, ids, now });
    expect(await seen([comment, comment, bens, 'no_such_key'], NOW + 1)).to.equal(1);
    expect(await seen([comment], NOW + 2)).to.equal(0);
    await expectInbox(tray, context, 'u-ana', NOW + 2);
    expect(await seen('all', NOW + 3)).to.equal(2);
    await expectInbox(tray, context, 'u-ana', NOW + 3);
    await expectInbox(tray, context, 'u-ben', NOW + 3);
  },
  { needs: 'inbox' },
);

conformanceCase(
  "inbox: archive and snooze take records out of the inbox, both counts and the platform's pages; each view pages them",
  async (context) => {
    const { tray, ana, comment, reaction, mention } = await seeded(context);
    await both(tray, context, readComment(context, ana, NOW + 1));
    expect(
      await both(tray, context, { kind: 'archive', userId: ana, ids: [comment], now: NOW + 2 }),
    ).to.equal(1);
    expect(
      await both(tray, context, { kind: 'archive', userId: ana, ids: [comment], now: NOW + 3 }),
    ).to.equal(0);
    expect(
      await both(tray, context, {
        kind: 'snooze',
        userId: ana,
        ids: [reaction],
        until: NOW + 60_000,
        now: NOW + 3,
      }),
    ).to.equal(1);
    await expectInbox(tray, context, 'u-ana', NOW + 4);
    // Archiving the snoozed record ends its snooze; unarchive brings both back as they were.
    expect(
      await both(tray, context, { kind: 'archive', userId: ana, ids: [reaction, mention], now: NOW + 5 }),
    ).to.equal(2);
    await expectInbox(tray, context, 'u-ana', NOW + 5);
    expect(
      await both(tray, context, { kind: 'unarchive', userId: ana, ids: [comment, reaction], now: NOW + 6 }),
    ).to.equal(2);
    await both(tray, context, {
      kind: 'snooze',
      userId: ana,
      ids: [comment],
      until: NOW + 60_000,
      now: NOW + 7,
    });
    expect(
      await both(tray, context, { kind: 'unsnooze', userId: ana, ids: [comment, mention], now: NOW + 8 }),
    ).to.equal(1);
    await expectInbox(tray, context, 'u-ana', NOW + 8);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'inbox: archive all covers the inbox only, with readOnly only records marked read',
  async (context) => {
    const { tray, ana, reaction } = await seeded(context);
    await both(tray, context, readComment(context, ana, NOW + 1));
    await both(tray, context, {
      kind: 'snooze',
      userId: ana,
      ids: [reaction],
      until: NOW + 60_000,
      now: NOW + 1,
    });
    expect(
      await both(tray, context, { kind: 'archive', userId: ana, ids: 'all', readOnly: true, now: NOW + 2 }),
    ).to.equal(1);
    await expectInbox(tray, context, 'u-ana', NOW + 2);
    expect(await both(tray, context, { kind: 'archive', userId: ana, ids: 'all', now: NOW + 3 })).to.equal(1);
    await expectInbox(tray, context, 'u-ana', NOW + 3);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'inbox: new activity brings archived and snoozed records back unread and unseen; read marks and last-read see',
  async (context) => {
    const { tray, ana, comment, reaction } = await seeded(context);
    await both(tray, context, { kind: 'markAllRead', userId: ana, now: NOW + 1 });
    await both(tray, context, { kind: 'archive', userId: ana, ids: [comment], now: NOW + 2 });
    await both(tray, context, {
      kind: 'snooze',
      userId: ana,
      ids: [reaction],
      until: NOW + 60_000,
      now: NOW + 2,
    });
    const post = { postId: context.id('p-1'), owner: ana };
    await tray.personal(
      [
        aComment(context.id('u-fay'), post, { id: context.id('cm-2'), at: at(5) }),
        aReaction(context.id('u-fay'), post, { id: context.id('r-2'), at: at(5) }),
        aMention(context.id('u-fay'), ana, { in: 'post', postId: context.id('p-4') }, { at: at(6) }),
      ],
      NOW + 3,
    );
    await expectInbox(tray, context, 'u-ana', NOW + 3);
    await both(tray, context, { kind: 'lastRead', userId: ana, now: NOW + 4 });
    await expectInbox(tray, context, 'u-ana', NOW + 4);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'inbox: a late action of an actor counted at a later one leaves the record read and archived; one before every counted action brings it back',
  async (context) => {
    // Ana's comment record: Cy at minute 1 (seeded), Gus at 3, Cy again at 4.
    const { tray, ana, comment } = await seeded(context);
    const post = { postId: context.id('p-1'), owner: ana };
    await tray.personal(
      [
        aComment(context.id('u-gus'), post, { id: context.id('cm-g3'), at: at(3) }),
        aComment(context.id('u-cy'), post, { id: context.id('cm-c4'), at: at(4) }),
      ],
      NOW + 1,
    );
    await both(tray, context, { kind: 'markAllRead', userId: ana, now: NOW + 2 });
    await both(tray, context, { kind: 'archive', userId: ana, ids: [comment], now: NOW + 2 });
    const state = async (now: number) => {
      const [record] = await context.storage.records.byKeys(ana, [comment], now);
      return { hasRead: record?.hasRead, isSeen: record?.isSeen, archived: record?.archivedAt !== null };
    };
    // Cy at minute 2, delivered late: Cy stays counted once, at minute 4. No new action.
    await tray.personal(
      [aComment(context.id('u-cy'), post, { id: context.id('cm-c2'), at: at(2) })],
      NOW + 3,
    );
    await expectInbox(tray, context, 'u-ana', NOW + 3);
    expect(await state(NOW + 3)).to.deep.equal({ hasRead: true, isSeen: true, archived: true });
    // Gus at minute 0, before every action the record counts: its first counted action moves back.
    await tray.personal(
      [aComment(context.id('u-gus'), post, { id: context.id('cm-g0'), at: at(0) })],
      NOW + 4,
    );
    await expectInbox(tray, context, 'u-ana', NOW + 4);
    expect(await state(NOW + 4)).to.deep.equal({ hasRead: false, isSeen: false, archived: false });
  },
  { needs: 'inbox' },
);

conformanceCase(
  'inbox: the wake-up brings due snoozes back unread and unseen at their until, and not before',
  async (context) => {
    const { tray, ana, ben, comment, reaction, bens } = await seeded(context);
    await both(tray, context, { kind: 'markAllRead', userId: ana, now: NOW + 1 });
    await both(tray, context, {
      kind: 'snooze',
      userId: ana,
      ids: [comment],
      until: NOW + 10_000,
      now: NOW + 2,
    });
    await both(tray, context, {
      kind: 'snooze',
      userId: ana,
      ids: [reaction],
      until: NOW + 20_000,
      now: NOW + 2,
    });
    await both(tray, context, {
      kind: 'snooze',
      userId: ben,
      ids: [bens],
      until: NOW + 10_000,
      now: NOW + 2,
    });
    await both(tray, context, { kind: 'lastRead', userId: ana, now: NOW + 3 });
    await both(tray, context, { kind: 'wake', now: NOW + 9_999 });
    await expectInbox(tray, context, 'u-ana', NOW + 9_999);
    await both(tray, context, { kind: 'wake', now: NOW + 10_300 });
    await expectInbox(tray, context, 'u-ana', NOW + 10_300);
    await expectInbox(tray, context, 'u-ben', NOW + 10_300);
    await both(tray, context, { kind: 'wake', now: NOW + 20_000 });
    await expectInbox(tray, context, 'u-ana', NOW + 20_000);
  },
  { needs: 'inbox' },
);

// A record made unread at or before the user's last-read time is counted neither unread nor unseen,
// whatever order the writes land in: a job whose clock began before the last-read may commit its
// record after it (its unread time is the job's), and a snooze due before the last-read may wake
// after it (its unread time is its until).
conformanceCase(
  'inbox: a record made unread before the last-read but written after it counts neither unread nor unseen',
  async (context) => {
    const { tray, ana } = await seeded(context);
    await both(tray, context, { kind: 'lastRead', userId: ana, now: NOW + 10 });
    const post = { postId: context.id('p-1'), owner: ana };
    await tray.personal(
      [
        aComment(context.id('u-fay'), post, { id: context.id('cm-late'), at: at(7) }),
        aComment(
          context.id('u-gus'),
          { postId: context.id('p-9'), owner: ana },
          { id: context.id('cm-9'), at: at(7) },
        ),
      ],
      NOW + 5,
    );
    await expectInbox(tray, context, 'u-ana', NOW + 11);
    const counts = modelInboxSnapshot(tray.model, ana, NOW + 11);
    expect(counts.unseen, 'unseen').to.equal(0);
    // Activity after the last-read counts again, both ways.
    await tray.personal(
      [aComment(context.id('u-hal'), post, { id: context.id('cm-after'), at: at(8) })],
      NOW + 12,
    );
    await expectInbox(tray, context, 'u-ana', NOW + 13);
    expect(modelInboxSnapshot(tray.model, ana, NOW + 13).unseen, 'unseen after').to.equal(1);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'inbox: a snooze due before the last-read and woken after it counts neither unread nor unseen',
  async (context) => {
    const { tray, ana, comment } = await seeded(context);
    await both(tray, context, {
      kind: 'snooze',
      userId: ana,
      ids: [comment],
      until: NOW + 10_000,
      now: NOW + 1,
    });
    await both(tray, context, { kind: 'lastRead', userId: ana, now: NOW + 10_100 });
    await both(tray, context, { kind: 'wake', now: NOW + 10_300 });
    await expectInbox(tray, context, 'u-ana', NOW + 10_300);
    expect(modelInboxSnapshot(tray.model, ana, NOW + 10_300).unseen, 'unseen').to.equal(0);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'inbox: two tray processes waking at once wake every due record exactly once',
  async (context) => {
    const tray = modelledStorage(context);
    const owners = [0, 1, 2, 3].map((index) => context.id(`u-own${index}`));
    const activities = owners.flatMap((owner, index) =>
      Array.from({ length: 10 }, (_, n) =>
        aComment(
          context.id('u-cy'),
          { postId: context.id(`p-${index}.${n}`), owner },
          { id: context.id(`cm-${index}.${n}`), at: at(n) },
        ),
      ),
    );
    await tray.personal(activities);
    // Due a day before the case's clock: no other case's snooze is due before it.
    const until = NOW - 86_400_000 + 1;
    for (const owner of owners) {
      const ids = activities
        .filter((activity) => activity.audience.kind === 'user' && activity.audience.userId === owner)
        .map((activity) => encodeRecordKey({ verb: 'comment', targetId: activity.targetId, userId: owner }));
      await both(tray, context, { kind: 'snooze', userId: owner, ids, until, now: NOW - 86_400_000 });
    }
    const peer = await context.peer();
    const claim = async (storage: typeof context.storage) => {
      const woken: string[] = [];
      for (;;) {
        const batch = await inboxOf(storage).wakeDue(NOW, 4);
        woken.push(...batch.filter((record) => owners.includes(record.userId)).map((record) => record.key));
        if (batch.length < 4) return woken;
      }
    };
    const [first, second] = await Promise.all([claim(context.storage), claim(peer)]);
    const all = [...first, ...second];
    expect(all).to.have.length(40);
    expect(new Set(all).size).to.equal(40);
    tray.model.apply({ kind: 'wake', now: NOW });
    for (const [index] of owners.entries()) await expectInbox(tray, context, `u-own${index}`, NOW);
  },
  { needs: 'inbox', timeout: 60_000 },
);

conformanceCase(
  'inbox: a snooze that ends after its record expired wakes nothing: the record is not announced',
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-exp');
    // Everything here happens days before the case's clock, so no other case's snooze is due by
    // the wake-up's time: the old record expires 3 days before NOW, the young one lives on.
    const wakeAt = NOW - 2 * DAY_MS;
    const snoozedAt = NOW - 4 * DAY_MS;
    const old = { postId: context.id('p-old'), owner: ana };
    const young = { postId: context.id('p-young'), owner: ana };
    await tray.personal(
      [
        aComment(context.id('u-cy'), old, { id: context.id('cm-old'), at: NOW - 93 * DAY_MS }),
        aComment(context.id('u-cy'), young, { id: context.id('cm-young'), at: NOW - 10 * DAY_MS }),
      ],
      snoozedAt,
    );
    const keys = [old, young].map((post) =>
      encodeRecordKey({ verb: 'comment', targetId: post.postId, userId: ana }),
    );
    expect(
      await both(tray, context, {
        kind: 'snooze',
        userId: ana,
        ids: keys,
        until: wakeAt - 1,
        now: snoozedAt,
      }),
    ).to.equal(2);
    const woken: string[] = [];
    for (;;) {
      const batch = await inboxOf(context.storage).wakeDue(wakeAt, 100);
      woken.push(...batch.filter((record) => record.userId === ana).map((record) => record.key));
      if (batch.length < 100) break;
    }
    expect(woken, 'records woken (and so announced to live streams)').to.deep.equal([keys[1]]);
    tray.model.apply({ kind: 'wake', now: wakeAt });
    await expectInbox(tray, context, 'u-exp', wakeAt);
  },
  { needs: 'inbox', timeout: 60_000 },
);

conformanceCase(
  'inbox: mutes: a second put changes only until, removal ends the span, the list shows those in force',
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    const post = { targetType: 'post' as const, targetId: context.id('p-1') };
    const community = { targetType: 'community' as const, targetId: context.id('c-hike') };
    await both(tray, context, { kind: 'mute', userId: ana, target: post, until: null, now: NOW });
    await both(tray, context, {
      kind: 'mute',
      userId: ana,
      target: community,
      until: NOW + 5_000,
      now: NOW + 1,
    });
    await both(tray, context, { kind: 'mute', userId: ana, target: post, until: NOW + 50_000, now: NOW + 2 });
    const inForce = async (now: number) => ({
      storage: await inboxOf(context.storage).mutesInForce(ana, now),
      model: tray.model.mutesOf(ana).filter((mute) => muteInForceAt(mute, now)),
    });
    let lists = await inForce(NOW + 3);
    expect(lists.storage).to.deep.equal(lists.model);
    expect(lists.storage.map((mute) => [mute.targetType, mute.createdAt, mute.until])).to.deep.equal([
      ['post', NOW, NOW + 50_000],
      ['community', NOW + 1, NOW + 5_000],
    ]);
    expect(await both(tray, context, { kind: 'unmute', userId: ana, target: post, now: NOW + 10 })).to.equal(
      1,
    );
    expect(await both(tray, context, { kind: 'unmute', userId: ana, target: post, now: NOW + 11 })).to.equal(
      0,
    );
    lists = await inForce(NOW + 6_000);
    expect(lists.storage).to.deep.equal(lists.model);
    expect(lists.storage).to.deep.equal([]);
    // Put again after its end: a new span from now.
    await both(tray, context, { kind: 'mute', userId: ana, target: post, until: null, now: NOW + 7_000 });
    lists = await inForce(NOW + 7_000);
    expect(lists.storage).to.deep.equal(lists.model);
    expect(lists.storage.map((mute) => mute.createdAt)).to.deep.equal([NOW + 7_000]);
  },
  { needs: 'inbox' },
);

conformanceCase(
  "inbox: the platform's v2 pages and counts are the inbox's",
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    await tray.membership('u-ana', true, 0);
    await tray.posts([
      aPost(context.id('u-cy'), { id: context.id('p-1'), at: at(1), communityId: tray.communityId }),
    ]);
    const key = encodeRecordKey({ verb: 'post', targetId: tray.communityId, userId: ana });
    await both(tray, context, { kind: 'archive', userId: ana, ids: [key], now: NOW + 1 });
    await expectInbox(tray, context, 'u-ana', NOW + 1);
    expect(await context.storage.records.count(ana, NOW + 1)).to.equal(0);
  },
  { needs: 'inbox' },
);

conformanceCase(
  "inbox: both counts of many users at once are each user's own and the reference tray's, whatever their last-read times",
  async (context) => {
    const { tray, ana, ben, comment, reaction, mention } = await seeded(context);
    const [fay, gus] = [context.id('u-fay'), context.id('u-gus')];
    const comments = (users: readonly string[], minute: number) =>
      users.map((owner) =>
        aComment(
          context.id('u-hal'),
          { postId: `${owner}-p${minute}`, owner },
          { id: `${owner}-cm${minute}`, at: at(minute) },
        ),
      );
    await tray.personal(comments([fay, gus], 5), NOW + 1);
    // Ana's records out of the inbox, seen, and read; Ben and Fay read at the same time, so they
    // share a last-read time the others do not; Gus never read but saw one; then more for three.
    await both(tray, context, { kind: 'archive', userId: ana, ids: [comment], now: NOW + 2 });
    await both(tray, context, {
      kind: 'snooze',
      userId: ana,
      ids: [reaction],
      until: NOW + 60_000,
      now: NOW + 2,
    });
    await both(tray, context, { kind: 'seen', userId: ana, ids: [mention], now: NOW + 2 });
    const gusFirst = encodeRecordKey({ verb: 'comment', targetId: `${gus}-p5`, userId: gus });
    await both(tray, context, { kind: 'seen', userId: gus, ids: [gusFirst], now: NOW + 2 });
    await both(tray, context, { kind: 'lastRead', userId: ana, now: NOW + 3 });
    await both(tray, context, { kind: 'lastRead', userId: ben, now: NOW + 4 });
    await both(tray, context, { kind: 'lastRead', userId: fay, now: NOW + 4 });
    await tray.personal(comments([ana, ben, gus], 6), NOW + 5);
    const users = [ana, ben, fay, gus, ana, context.id('u-nobody')];
    const found = await manyUsersCountDifferences(context.storage, tray.model, users, NOW + 6);
    if (found.length > 0) expect.fail(`countInboxes:\n${found.join('\n')}`);
    // Not all alike: what each user's last-read time and marks leave differs.
    const counts = await inboxOf(context.storage).countInboxes(users, NOW + 6);
    expect(
      Object.fromEntries(
        [...(counts ?? [])].map(([userId, { unread, unseen }]) => [userId.split('_')[0], { unread, unseen }]),
      ),
    ).to.deep.equal({
      'u-ana': { unread: 1, unseen: 1 },
      'u-ben': { unread: 1, unseen: 1 },
      'u-fay': { unread: 0, unseen: 0 },
      'u-gus': { unread: 2, unseen: 1 },
      'u-nobody': { unread: 0, unseen: 0 },
    });
  },
  { needs: 'inbox' },
);

conformanceCase(
  'inbox: both counts of many users name when the first record they counted expires (none: no time)',
  async (context) => {
    const { tray, ana, ben, reaction, mention } = await seeded(context);
    const inbox = inboxOf(context.storage);
    const expiry = async (key: string) => {
      const { records } = await context.storage.records.pageAfter(ana, undefined, 10, NOW);
      const record = records.find((found) => found.key === key);
      if (!record) throw new Error(`no record ${key}`);
      return record.lastUpdate + RETENTION_DAYS * DAY_MS;
    };
    const [reactionExpiry, mentionExpiry] = [await expiry(reaction), await expiry(mention)];
    // Ana's comment, the first of hers to expire, is read and seen: neither count has it. Her
    // reaction, seen but unread, is counted (unread) and comes next; Ben read all of his.
    await both(tray, context, readComment(context, ana, NOW + 1));
    await both(tray, context, { kind: 'seen', userId: ana, ids: [reaction], now: NOW + 1 });
    await both(tray, context, { kind: 'lastRead', userId: ben, now: NOW + 1 });
    const named = async (now: number) =>
      Object.fromEntries(
        [...(await inbox.countInboxes([ana, ben, context.id('u-nobody')], now))].map(([userId, pair]) => [
          userId.split('_')[0],
          pair.nextExpiry,
        ]),
      );
    // Long before it: a time after `now` and not after the reaction's expiry (an adapter may name
    // an earlier one, when it does not read that far ahead; the streams then count again and find
    // nothing changed).
    const early = await named(NOW + 2);
    expect(early['u-ana'])
      .to.be.above(NOW + 2)
      .and.at.most(reactionExpiry);
    expect(early).to.deep.include({ 'u-ben': undefined, 'u-nobody': undefined });
    // Shortly before it: the reaction's expiry itself.
    expect(await named(reactionExpiry - 60_000)).to.deep.equal({
      'u-ana': reactionExpiry,
      'u-ben': undefined,
      'u-nobody': undefined,
    });
    // Once it has expired, the mention's (unread and unseen); archived, nothing of Ana's is counted.
    expect((await named(reactionExpiry))['u-ana']).to.equal(mentionExpiry);
    await both(tray, context, { kind: 'archive', userId: ana, ids: [mention], now: NOW + 3 });
    expect((await named(reactionExpiry))['u-ana']).to.equal(undefined);
  },
  { needs: 'inbox' },
);
