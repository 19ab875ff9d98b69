import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { jobScope } from '../../../../shared/async/job-scope.ts';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import { ReferenceTray, type TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import { aComment, aMention, aPost, aReply } from '../../../support/activity-builder.ts';
import { applyOperation, RETENTION_DAYS } from './apply-operation.ts';
import { inboxOf } from './inbox-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';
import { DeletedUserError } from '../../../../tray-service/domain/deleted-user-error.ts';
import { createBlockList } from '../../../../tray-service/use-cases/block-list.ts';
import { markLastRead } from '../../../../tray-service/use-cases/last-read.ts';
import { putMute } from '../../../../tray-service/use-cases/put-mute.ts';
import { modelledStorage } from './modelled-storage.ts';
import { differences, modelSnapshot, storageSnapshot } from './tray-snapshot.ts';

/**
 * A deletion is final (docs/tray-rules.md#deleted-users): whatever is delivered after a user's
 * profile was deleted, however old, creates and changes nothing in their tray, and their own
 * actions delivered then show them as `Deleted user` without image, in every record and in what
 * later recomputations read. Also when the deliveries and the deletion run at once.
 */

/** The deployment's NETWORK_ID the block list is kept under. */
const NETWORK = 'net-conformance';

const XENA = { name: 'Xena', imageUrl: 'https://img.example/xena' };

/** Each actor a record names, by name, with whether an image came along and whether marked deleted. */
const namesOf = (record: TrayRecord | undefined) =>
  record?.actors.map((actor) => [actor.name, actor.imageUrl ?? null, actor.deleted ?? false]);

conformanceCase(
  'deleted users: nothing delivered after the deletion reaches them: personal actions, posts dated before it, a late join',
  async (context) => {
    const { id } = context;
    const c = modelledStorage(context);
    const [ana, ben, cid] = ['ana', 'ben', 'cid'].map(id) as [string, string, string];
    const own = { postId: id('p-ben'), owner: ben };
    for (const member of ['ana', 'ben', 'cid']) await c.membership(member, true, 0);
    await c.apply({ kind: 'deleteProfile', userId: ben, at: at(10), now: NOW });
    // Made before the deletion, delivered after it: a comment and a reply on a community's target,
    // a mention on a user's feed, a community post, and one redelivered.
    const comment = aComment(ana, own, { id: id('cm-1'), at: at(2), communityId: c.communityId });
    await c.personal(
      [
        comment,
        aReply(
          cid,
          { commentId: id('cm-ben'), owner: ben, postId: own.postId },
          {
            id: id('re-1'),
            at: at(3),
            communityId: c.communityId,
          },
        ),
        aMention(ana, ben, { in: 'post', postId: id('p-feed') }, { at: at(4), userFeed: ana }),
      ],
      NOW + 1,
    );
    await c.posts([aPost(cid, { id: id('p-4'), at: at(4), communityId: c.communityId })], NOW + 1);
    await c.personal([comment], NOW + 2);
    // After it: a comment while away, a post, then a join processed late, which would add both.
    await c.personal(
      [aComment(cid, own, { id: id('cm-22'), at: at(22), communityId: c.communityId })],
      NOW + 3,
    );
    await c.posts([aPost(ana, { id: id('p-25'), at: at(25), communityId: c.communityId })], NOW + 3);
    await c.membership('ben', true, 20, NOW + 4);
    await c.posts([aPost(cid, { id: id('p-30'), at: at(30), communityId: c.communityId })], NOW + 5);
    expect(await c.records('ben', NOW + 5)).to.deep.equal([]);
    expect(await context.storage.records.count(ben, NOW + 5)).to.equal(0);
    expect(await context.storage.records.countUnread(ben, 0, NOW + 5)).to.equal(0);
    for (const user of ['ana', 'ben', 'cid']) await c.expectModel(user, NOW + 5);
    // The others' records were written as usual.
    expect((await c.record('ana', 'post', NOW + 5))?.lastActionId).to.equal(id('p-30'));
    expect((await c.record('cid', 'post', NOW + 5))?.lastActionId).to.equal(id('p-25'));
  },
);

conformanceCase(
  'deleted users: their actions delivered after the deletion show `Deleted user` without image, also once a late join or a removal computes records again',
  async (context) => {
    const { id } = context;
    const c = modelledStorage(context);
    const [ana, ben, cid] = ['ana', 'ben', 'cid'].map(id) as [string, string, string];
    const xena = id('xena');
    const post = { postId: id('p-ana'), owner: ana };
    const where = { communityId: c.communityId };
    for (const member of ['ana', 'cid']) await c.membership(member, true, 0);
    await c.apply({ kind: 'deleteProfile', userId: xena, at: at(10), now: NOW });
    await c.personal(
      [
        aComment(xena, post, { id: id('cm-x'), at: at(1), ...XENA, ...where }),
        aMention(
          xena,
          cid,
          { in: 'comment', commentId: id('cm-x'), postId: post.postId },
          {
            at: at(1),
            ...XENA,
            ...where,
          },
        ),
      ],
      NOW + 1,
    );
    await c.posts([aPost(xena, { id: id('p-x'), at: at(2), ...XENA, ...where })], NOW + 1);
    const deleted = [['Deleted user', null, true]];
    expect(namesOf(await c.record('ana', 'comment', NOW + 1))).to.deep.equal(deleted);
    expect(namesOf(await c.record('ana', 'post', NOW + 1))).to.deep.equal(deleted);
    expect(namesOf(await c.record('cid', 'mention', NOW + 1))).to.deep.equal(deleted);
    // Computed again from what was kept: a late join's backfill, a removal taking another comment
    // back; a late leave in between takes nothing back.
    await c.membership('ben', true, 1, NOW + 2);
    await c.posts([aPost(ben, { id: id('p-ben'), at: at(6), name: 'Ben', ...where })], NOW + 2);
    await c.membership('cid', false, 5, NOW + 3);
    await c.personal([aComment(ben, post, { id: id('cm-ben'), at: at(7), name: 'Ben', ...where })], NOW + 3);
    await c.apply({
      kind: 'removal',
      removals: [{ kind: 'comment', id: id('cm-ben'), postId: post.postId, at: at(8) }],
      now: NOW + 4,
    });
    expect(namesOf(await c.record('ben', 'post', NOW + 4))).to.deep.equal(deleted);
    expect(namesOf(await c.record('cid', 'post', NOW + 4))).to.deep.equal([['Ben', null, false], ...deleted]);
    expect(namesOf(await c.record('ana', 'comment', NOW + 4))).to.deep.equal(deleted);
    expect(namesOf(await c.record('ana', 'post', NOW + 4))).to.deep.equal([['Ben', null, false], ...deleted]);
    for (const user of ['ana', 'ben', 'cid', 'xena']) await c.expectModel(user, NOW + 4);
  },
  { needs: 'removals' },
);

conformanceCase(
  'deleted users: what they did before the deletion shows `Deleted user` in every record that counts it, members’ post records too, and in what later computations read',
  async (context) => {
    const { id } = context;
    const c = modelledStorage(context);
    const [ana, cid] = ['ana', 'cid'].map(id) as [string, string];
    const xena = id('xena');
    const post = { postId: id('p-ana'), owner: ana };
    const where = { communityId: c.communityId };
    for (const member of ['ana', 'cid', 'xena']) await c.membership(member, true, 0);
    await c.personal(
      [
        aComment(xena, post, { id: id('cm-x'), at: at(1), ...XENA, ...where }),
        aMention(xena, cid, { in: 'post', postId: id('p-feed') }, { at: at(1), ...XENA, userFeed: cid }),
        // To Ben, not a member yet: kept, and added by his late join below.
        aComment(
          xena,
          { postId: id('p-ben'), owner: id('ben') },
          { id: id('cm-xb'), at: at(1), ...XENA, ...where },
        ),
      ],
      NOW,
    );
    await c.posts([aPost(xena, { id: id('p-x'), at: at(2), ...XENA, ...where })], NOW);
    await c.apply({ kind: 'deleteProfile', userId: xena, at: at(10), now: NOW + 1 });
    const deleted = [['Deleted user', null, true]];
    expect(namesOf(await c.record('ana', 'comment', NOW + 1))).to.deep.equal(deleted);
    expect(namesOf(await c.record('ana', 'post', NOW + 1))).to.deep.equal(deleted);
    expect(namesOf(await c.record('cid', 'post', NOW + 1))).to.deep.equal(deleted);
    expect(namesOf(await c.record('cid', 'mention', NOW + 1))).to.deep.equal(deleted);
    // Computed again from the kept snapshots: a late join's backfill, a removal of a later comment.
    await c.membership('ben', true, 1, NOW + 2);
    await c.personal([aComment(cid, post, { id: id('cm-cid'), at: at(7), ...where })], NOW + 3);
    await c.apply({
      kind: 'removal',
      removals: [{ kind: 'comment', id: id('cm-cid'), postId: post.postId, at: at(8) }],
      now: NOW + 4,
    });
    expect(namesOf(await c.record('ben', 'post', NOW + 4))).to.deep.equal(deleted);
    expect(namesOf(await c.record('ben', 'comment', NOW + 4))).to.deep.equal(deleted);
    expect(namesOf(await c.record('ana', 'comment', NOW + 4))).to.deep.equal(deleted);
    for (const user of ['ana', 'ben', 'cid', 'xena']) await c.expectModel(user, NOW + 4);
  },
  { needs: 'removals' },
);

conformanceCase(
  'deleted users: the deletion renames them in the post records of members whose join and leave fall in one millisecond',
  async (context) => {
    const { id } = context;
    const c = modelledStorage(context);
    const xena = id('xena');
    // As the removal case of the same members: Dee's leave and Cid's join and leave, all processed
    // after the post, leave both holding it without a membership interval.
    await c.membership('ben', true, 0);
    await c.membership('dee', true, 1);
    await c.posts([aPost(xena, { id: id('p-x'), at: at(2), ...XENA, communityId: c.communityId })]);
    await c.membership('dee', false, 1, NOW + 1);
    await c.membership('cid', true, 2, NOW + 2);
    await c.membership('cid', false, 2, NOW + 3);
    await c.apply({ kind: 'deleteProfile', userId: xena, at: at(10), now: NOW + 4 });
    for (const user of ['ben', 'cid', 'dee']) {
      expect(namesOf(await c.record(user, 'post', NOW + 4)), user).to.deep.equal([
        ['Deleted user', null, true],
      ]);
      await c.expectModel(user, NOW + 4);
    }
  },
);

conformanceCase(
  'deleted users: a deletion is final: one older than a stored update counts, and no later update brings the user back',
  async (context) => {
    const { storage, id, write } = context;
    const [ana, ben] = [id('ana'), id('ben')];
    const profile = (deleted: boolean, minute: number) => ({
      userId: ben,
      displayName: deleted ? 'Deleted user' : 'Ben',
      deleted,
      at: at(minute),
    });
    await storage.writes.applyProfiles([profile(false, 5)], write(NOW));
    // Received before the update, applied after it (a retry): still the deletion.
    await storage.writes.applyProfiles([profile(true, 3)], write(NOW + 1));
    await storage.writes.applyProfiles([profile(false, 9)], write(NOW + 2));
    await storage.writes.applyPersonal(
      [
        aComment(ana, { postId: id('p-ben'), owner: ben }, { id: id('cm-1'), at: at(10) }),
        aComment(ben, { postId: id('p-ana'), owner: ana }, { id: id('cm-2'), at: at(10), ...XENA }),
      ],
      write(NOW + 3),
    );
    expect(await storage.records.count(ben, NOW + 3)).to.equal(0);
    const { records } = await storage.records.pageAfter(ana, undefined, 10, NOW + 3);
    expect(records.map(namesOf)).to.deep.equal([[['Deleted user', null, true]]]);
  },
);

conformanceCase(
  'deleted users: their mutes and last-read time go with their tray; others’ mutes of them stay',
  async (context) => {
    const { storage, id } = context;
    const inbox = inboxOf(storage);
    const c = modelledStorage(context);
    const [ana, ben] = [id('ana'), id('ben')];
    const community = { targetType: 'community' as const, targetId: c.communityId };
    const anaAsTarget = { targetType: 'user' as const, targetId: ana };
    const benAsTarget = { targetType: 'user' as const, targetId: ben };
    await c.apply({ kind: 'mute', userId: ben, target: community, until: null, now: NOW });
    await c.apply({ kind: 'mute', userId: ben, target: anaAsTarget, until: NOW + 60_000, now: NOW });
    // An ended span is kept too (it judges late deliveries): it goes as well.
    await c.apply({ kind: 'unmute', userId: ben, target: anaAsTarget, now: NOW + 1 });
    await c.apply({ kind: 'mute', userId: ana, target: benAsTarget, until: null, now: NOW + 1 });
    await c.apply({ kind: 'lastRead', userId: ben, now: NOW + 2 });
    expect(await storage.lastRead.latest(ben)).to.equal(NOW + 2);

    await c.apply({ kind: 'deleteProfile', userId: ben, at: at(10), now: NOW + 3 });
    expect(await inbox.mutesInForce(ben, NOW + 4)).to.deep.equal([]);
    expect(await storage.communityMembers.muteSpansOn([ben], [community, anaAsTarget])).to.deep.equal([]);
    expect(c.model.mutesOf(ben)).to.deep.equal([]);
    expect(await storage.lastRead.latest(ben))
      .to.equal(c.model.lastRead(ben))
      .and.to.equal(0);
    // Ana's mute of Ben is hers.
    expect((await inbox.mutesInForce(ana, NOW + 4)).map((mute) => mute.targetId)).to.deep.equal([ben]);
    expect(c.model.mutesOf(ana).map((mute) => mute.targetId)).to.deep.equal([ben]);
  },
);

conformanceCase(
  'deleted users: what they keep is forgotten by the deletion only: a removal that puts their earlier action back leaves what was stored for them after it',
  async (context) => {
    const { storage, id } = context;
    const inbox = inboxOf(storage);
    const c = modelledStorage(context);
    const [ana, ben] = [id('ana'), id('ben')];
    const post = { postId: id('p-ana'), owner: ana };
    const where = { communityId: c.communityId };
    await c.personal([
      aComment(ben, post, { id: id('cm-1'), at: at(1), name: 'Ben', ...where }),
      aComment(ben, post, { id: id('cm-3'), at: at(3), name: 'Ben', ...where }),
    ]);
    await c.apply({ kind: 'deleteProfile', userId: ben, at: at(10), now: NOW + 1 });
    // Stored through the port after the deletion (the tray's calls answer 410 and remove it
    // themselves, use-cases/last-read.ts): a later write is no deletion and leaves it.
    const target = { targetType: 'post' as const, targetId: id('p-other') };
    await c.apply({ kind: 'lastRead', userId: ben, now: NOW + 2 });
    await c.apply({ kind: 'mute', userId: ben, target, until: null, now: NOW + 2 });
    // Ben's newest comment removed: his comment at minute 1 is put back among the post's actors.
    await c.apply({
      kind: 'removal',
      removals: [{ kind: 'comment', id: id('cm-3'), postId: post.postId, at: at(11) }],
      now: NOW + 3,
    });
    expect(namesOf(await c.record('ana', 'comment', NOW + 3))).to.deep.equal([['Deleted user', null, true]]);
    expect(await storage.lastRead.latest(ben))
      .to.equal(c.model.lastRead(ben))
      .and.to.equal(NOW + 2);
    expect((await inbox.mutesInForce(ben, NOW + 3)).map((mute) => mute.targetId)).to.deep.equal([
      target.targetId,
    ]);
    expect(c.model.mutesOf(ben).map((mute) => mute.targetId)).to.deep.equal([target.targetId]);
    for (const user of ['ana', 'ben']) await c.expectModel(user, NOW + 3);
  },
  { needs: 'removals' },
);

conformanceCase(
  'deleted users: isDeleted tells a stored deletion from a live, renamed or unknown user; forgetKept removes only the named users’ mutes and last-read times',
  async (context) => {
    const { storage, id } = context;
    const inbox = inboxOf(storage);
    const c = modelledStorage(context);
    const [ana, ben, cid] = [id('ana'), id('ben'), id('cid')];
    const post = { targetType: 'post' as const, targetId: id('p-1') };
    await storage.writes.applyProfiles(
      [{ userId: ana, displayName: 'Ana B.', deleted: false, at: at(1) }],
      context.write(NOW),
    );
    await c.apply({ kind: 'deleteProfile', userId: ben, at: at(2), now: NOW });
    expect(await storage.deletedUsers.isDeleted(ana)).to.equal(false);
    expect(await storage.deletedUsers.isDeleted(ben)).to.equal(true);
    expect(await storage.deletedUsers.isDeleted(cid)).to.equal(false);
    expect(await storage.deletedUsers.isDeleted(id('never-seen'))).to.equal(false);

    for (const user of [ana, cid]) {
      await inbox.putMute(user, post, null, NOW, RETENTION_DAYS, 10);
      await storage.lastRead.record(user, NOW + 1);
    }
    await storage.deletedUsers.forgetKept([ana]);
    await storage.deletedUsers.forgetKept([ana]);
    expect(await inbox.mutesInForce(ana, NOW + 2)).to.deep.equal([]);
    expect(await storage.communityMembers.muteSpansOn([ana], [post])).to.deep.equal([]);
    expect(await storage.lastRead.latest(ana)).to.equal(0);
    expect((await inbox.mutesInForce(cid, NOW + 2)).map((mute) => mute.targetId)).to.deep.equal([
      post.targetId,
    ]);
    expect(await storage.lastRead.latest(cid)).to.equal(NOW + 1);
    // Forgetting is not a deletion.
    expect(await storage.deletedUsers.isDeleted(ana)).to.equal(false);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'deleted users: a mute, a last-read time or a block asked later (a token from before the deletion) is refused and stores nothing; before it, the deletion removes them',
  async (context) => {
    const { storage, id } = context;
    const inbox = inboxOf(storage);
    const c = modelledStorage(context);
    const [ana, ben, cid] = [id('ana'), id('ben'), id('cid')];
    const blocks = createBlockList(storage.blockList, storage.deletedUsers, NETWORK);
    const target = { targetType: 'community' as const, targetId: c.communityId };
    const mute = (userId: string, now: number) =>
      putMute(storage, { userId, target, until: null, now, retentionDays: RETENTION_DAYS });

    // Asked before the deletion: kept, then removed by it.
    await mute(ben, NOW);
    await markLastRead(storage, undefined, ben, NOW);
    expect(await blocks.block(ben, cid)).to.equal('blocked');
    await c.apply({ kind: 'deleteProfile', userId: ben, at: at(10), now: NOW + 1 });
    await blocks.forget(ben);

    // Asked after it, each is refused with the typed error, and nothing of it is left.
    for (const [what, call] of [
      ['mute', () => mute(ben, NOW + 2)],
      ['last-read', () => markLastRead(storage, undefined, ben, NOW + 2)],
      ['block', () => blocks.block(ben, cid)],
    ] as const) {
      await expect(call(), what)
        .to.be.rejectedWith(DeletedUserError)
        .and.eventually.include({ code: 'USER_DELETED' });
    }
    expect(await inbox.mutesInForce(ben, NOW + 3)).to.deep.equal([]);
    expect(await storage.communityMembers.muteSpansOn([ben], [target])).to.deep.equal([]);
    expect(await storage.lastRead.latest(ben)).to.equal(0);
    expect(await blocks.page(ben, undefined)).to.deep.equal({ results: [], paginationToken: null });
    expect(c.model.mutesOf(ben)).to.deep.equal([]);

    // Another user's are kept as ever, also of the deleted user.
    await mute(ana, NOW + 2);
    await markLastRead(storage, undefined, ana, NOW + 2);
    expect(await blocks.block(ana, ben)).to.equal('blocked');
    expect(await inbox.mutesInForce(ana, NOW + 3)).to.have.length(1);
    expect(await storage.lastRead.latest(ana)).to.equal(NOW + 2);
    expect((await blocks.check(ana, [ben])).get(ben)).to.equal(true);
  },
  { needs: 'inbox' },
);

/** Rounds, each with users and a community of its own: the deletion starts at a different place. */
const ROUNDS = 12;

conformanceCase(
  'deleted users: deliveries racing the deletion leave nothing in their tray and no old name in any record, in every interleaving tried',
  async (context) => {
    const { id } = context;
    const failures: string[] = [];
    // Two tray processes share the jobs, as in removal-race-cases.ts.
    const storages = [context.storage, await context.peer()];
    for (let round = 0; round < ROUNDS; round++) {
      const [ana, cid, xena] = ['ana', 'cid', 'xena'].map((name) => id(`${name}-${round}`)) as [
        string,
        string,
        string,
      ];
      const communityId = id(`c-${round}`);
      const where = { communityId };
      const post = { postId: id(`p-ana-${round}`), owner: ana };
      const model = new ReferenceTray({ retentionDays: RETENTION_DAYS });
      const serial = async (operation: TrayOperation) => {
        model.apply(operation);
        await applyOperation(context.storage, operation, (now) => context.write(now));
      };
      // Xena is a member and already named in Ana's comments record.
      await serial({
        kind: 'membership',
        changes: [ana, cid, xena].map((userId) => ({ communityId, userId, active: true, at: at(0) })),
        now: NOW,
      });
      await serial({
        kind: 'personal',
        activities: [aComment(xena, post, { id: id(`cm-x-${round}`), at: at(1), ...XENA, ...where })],
        now: NOW,
      });
      const action = (n: number) => ({ id: id(`a-${round}-${n}`), at: at(2 + n), ...where });
      const deliveries: Activity[][] = [
        // To her: on a community's target, on a user's feed, a post of the community.
        [aComment(cid, { postId: id(`p-x-${round}`), owner: xena }, action(0))],
        [aMention(ana, xena, { in: 'post', postId: id(`p-m-${round}`) }, { at: at(3), userFeed: ana })],
        [aPost(cid, action(2))],
        // By her.
        [aPost(xena, { ...action(3), ...XENA })],
        [aComment(xena, { postId: id(`p-ana2-${round}`), owner: ana }, { ...action(4), ...XENA })],
        // By others, on records that name her.
        [aComment(cid, post, action(5))],
        [aPost(ana, action(6))],
        [aComment(ana, { postId: id(`p-x-${round}`), owner: xena }, action(7))],
      ];
      const operations: TrayOperation[] = deliveries.map((activities) =>
        activities[0]?.audience.kind === 'community'
          ? { kind: 'posts', communityId, posts: activities, now: NOW + 1 }
          : { kind: 'personal', activities, now: NOW + 1 },
      );
      const deletion: TrayOperation = { kind: 'deleteProfile', userId: xena, at: at(20), now: NOW + 1 };
      // The model takes the deletion last; the rules make the order irrelevant.
      for (const operation of [...operations, deletion]) model.apply(operation);
      const racing = [...operations];
      racing.splice(round % (operations.length + 1), 0, deletion);
      const settled = await Promise.allSettled(
        racing.map((operation, n) =>
          jobScope.run(id(`job-${round}-${n}`), async () => {
            await sleep((n * 5 + round * 3) % 7);
            await applyOperation(storages[(n + round) % 2] ?? context.storage, operation, (now) =>
              context.write(now),
            );
          }),
        ),
      );
      const rejected = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
      if (rejected.length > 0)
        failures.push(`round ${round}: ${rejected.length} jobs failed: ${String(rejected[0])}`);
      for (const user of [ana, cid, xena]) {
        const found = differences(
          await storageSnapshot(context.storage, user, NOW + 1, 0),
          modelSnapshot(model, user, NOW + 1, 0),
        );
        if (found.length > 0) failures.push(`round ${round}, ${user}:\n${found.join('\n')}`);
      }
    }
    expect(
      failures,
      `failed in ${new Set(failures.map((line) => line.split(/[:,]/)[0])).size} of ${ROUNDS} rounds`,
    ).to.deep.equal([]);
  },
  { timeout: 300_000, ownDatabase: true },
);
