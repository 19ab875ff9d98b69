import { expect } from 'chai';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { DAY_MS, HOUR_MS } from '../../../../shared/time/durations.ts';
import { aPost } from '../../../support/activity-builder.ts';
import { applyOperation } from './apply-operation.ts';
import { actorIdsOf, at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';

/**
 * Community posts and membership by time (TrayWritesPort.fanOutPosts, applyMemberships,
 * MembersImportPort): who receives a post, late joins, late leaves, rejoins, deleted users.
 */

function community(context: ConformanceContext) {
  const communityId = context.id('c-hike');
  const post = (author: string, minute: number): Activity =>
    aPost(context.id(author), {
      id: context.id(`p-${author}-${minute}`),
      at: at(minute),
      communityId,
      name: author,
    });
  const posts = (list: Activity[], now = NOW) =>
    applyOperation(context.storage, { kind: 'posts', communityId, posts: list, now }, context.write);
  const membership = (user: string, active: boolean, minute: number, now = NOW) =>
    context.storage.writes.applyMemberships(
      [{ communityId, userId: context.id(user), active, at: at(minute) }],
      context.write(now),
    );
  const postRecord = async (user: string, now = NOW) => {
    const { records } = await context.storage.records.pageAfter(context.id(user), undefined, 10, now);
    return records.find((record) => record.verb === 'post');
  };
  /** A line of the platform's member list: `user` a member since `minute`. */
  const listed = (user: string, minute: number) => ({
    communityId,
    userId: context.id(user),
    since: at(minute),
  });
  return { communityId, post, posts, membership, postRecord, listed };
}

conformanceCase(
  'memberships: a post reaches the members at its createdAt, the author excluded',
  async (context) => {
    const c = community(context);
    await c.membership('ana', true, 0);
    await c.membership('ben', true, 0);
    await c.membership('cid', true, 6);
    await c.membership('dee', true, 0);
    await c.membership('dee', false, 4);
    await c.posts([c.post('ben', 5)]);
    const record = await c.postRecord('ana');
    expect(record).to.deep.include({
      verb: 'post',
      targetId: c.communityId,
      targetType: 'community',
      lastActionId: context.id('p-ben-5'),
      actorsCount: 1,
      lastUpdate: at(5),
    });
    for (const user of ['ben', 'cid', 'dee']) expect(await c.postRecord(user), user).to.equal(undefined);
  },
);

conformanceCase(
  'memberships: a join processed after the posts it precedes adds them; either order ends the same',
  async (context) => {
    const c = community(context);
    await c.posts([c.post('ben', 1), c.post('cid', 2)]);
    await c.membership('ana', true, 0, NOW + 1);
    const late = await c.postRecord('ana', NOW + 1);
    expect(late).to.include({ actorsCount: 2, lastActionId: context.id('p-cid-2'), unreadAt: NOW + 1 });
    expect(actorIdsOf(late)).to.deep.equal([context.id('cid'), context.id('ben')]);
    // The same events the other way round, for another member.
    await c.membership('dee', true, 0, NOW + 2);
    const onTime = await c.postRecord('dee', NOW + 2);
    expect({ ...onTime, userId: '', key: '', unreadAt: 0, changedAt: 0 }).to.deep.equal({
      ...late,
      userId: '',
      key: '',
      unreadAt: 0,
      changedAt: 0,
    });
    // A redelivered join adds nothing twice.
    await c.membership('ana', true, 0, NOW + 3);
    expect(await c.postRecord('ana', NOW + 3)).to.deep.equal(late);
  },
);

conformanceCase(
  'memberships: a late join backfills no post dated more than a day ahead of the tray clock',
  async (context) => {
    const c = community(context);
    const processedAt = NOW + 1;
    const bound = processedAt + DAY_MS;
    // Further ahead than the bound, but in the UTC day the bound falls in (the MongoDB adapter
    // reads stored posts a UTC day at a time); the bound at midnight leaves no such time.
    const nextMidnight = (Math.floor(bound / DAY_MS) + 1) * DAY_MS;
    const time = bound + Math.max(1, Math.floor((nextMidnight - bound) / 2));
    await c.posts([
      aPost(context.id('cid'), { id: context.id('p-cid'), at: time, communityId: c.communityId }),
    ]);
    await c.membership('ana', true, 0, processedAt);
    expect(await c.postRecord('ana', processedAt)).to.equal(undefined);
    // One up to a day ahead is backfilled.
    await c.posts([
      aPost(context.id('ben'), {
        id: context.id('p-ben'),
        at: processedAt + HOUR_MS,
        communityId: c.communityId,
      }),
    ]);
    await c.membership('dee', true, 0, processedAt);
    expect(actorIdsOf(await c.postRecord('dee', processedAt))).to.include(context.id('ben'));
  },
);

conformanceCase(
  'memberships: posts after a stored leave do not reach; a leave processed late takes back nothing',
  async (context) => {
    const c = community(context);
    await c.membership('ana', true, 0);
    await c.membership('dee', true, 0);
    await c.posts([c.post('ben', 2)]);
    expect(await c.postRecord('ana')).to.include({ lastActionId: context.id('p-ben-2') });
    const made = await c.postRecord('ana');
    await c.membership('ana', false, 1);
    expect(await c.postRecord('ana'), 'the post after the leave stays').to.deep.equal(made);
    await c.posts([c.post('cid', 2)]);
    expect(await c.postRecord('ana'), 'a post processed after the leave does not reach').to.deep.equal(made);
    await c.membership('dee', false, 3);
    await c.posts([c.post('cid', 4)]);
    expect(await c.postRecord('dee')).to.include({ lastActionId: context.id('p-cid-2'), actorsCount: 2 });
    // A join and a leave at the same instant leave the user out, whichever arrived first.
    await c.membership('eve', false, 3);
    await c.membership('eve', true, 3);
    await c.posts([c.post('cid', 3)]);
    expect(await c.postRecord('eve')).to.equal(undefined);
  },
);

conformanceCase(
  'memberships: after leaving and rejoining, updates resume and nothing posted while away is added or counted',
  async (context) => {
    const c = community(context);
    await c.membership('ana', true, 0);
    await c.posts([c.post('ben', 1)]);
    await c.membership('ana', false, 2);
    await c.posts([c.post('cid', 3)]);
    expect(await c.postRecord('ana')).to.include({ lastActionId: context.id('p-ben-1') });
    await c.membership('ana', true, 4);
    expect(await c.postRecord('ana'), 'the rejoin adds nothing of the time away').to.include({
      lastActionId: context.id('p-ben-1'),
      actorsCount: 1,
    });
    await c.posts([c.post('dee', 5)]);
    const record = await c.postRecord('ana');
    expect(record).to.include({ lastActionId: context.id('p-dee-5') });
    // Cid posted only while Ana was away: neither named nor counted.
    expect(actorIdsOf(record)).to.deep.equal([context.id('dee'), context.id('ben')]);
    expect(record?.actorsCount).to.equal(2);
  },
);

conformanceCase(
  'memberships: an import batch accounts for every line, a member listed twice counting once as unchanged',
  async (context) => {
    const c = community(context);
    const result = await context.storage.members.importBatch(
      [c.listed('ana', 0), c.listed('ben', 0), c.listed('ana', 0), c.listed('ben', 1), c.listed('ana', 0)],
      at(2),
    );
    expect(result).to.deep.equal({ inserted: 2, updated: 0, unchanged: 3 });
  },
);

// A list may name a member twice with two join times: the earliest is the membership's start.
conformanceCase(
  'memberships: a member listed twice with two join times is a member from the earliest',
  async (context) => {
    const c = community(context);
    await context.storage.members.importBatch([c.listed('ben', 3), c.listed('ben', 1)], at(5));
    await c.posts([c.post('cid', 2)]);
    expect(await c.postRecord('ben')).to.include({ lastActionId: context.id('p-cid-2') });
  },
);

conformanceCase('memberships: a deleted user leaves every community at the deletion', async (context) => {
  const c = community(context);
  await c.membership('ana', true, 0);
  await context.storage.writes.applyProfiles(
    [{ userId: context.id('ana'), displayName: 'Deleted user', deleted: true, at: at(2) }],
    context.write(NOW),
  );
  await c.posts([c.post('ben', 3)]);
  expect(await c.postRecord('ana')).to.equal(undefined);
});

conformanceCase(
  'memberships: imported members receive posts from `since`; a leave stored after the list’s time wins',
  async (context) => {
    const c = community(context);
    const members = (storage: TrayStorage) => storage.members;
    const result = await members(context.storage).importBatch(
      [
        { communityId: c.communityId, userId: context.id('ana'), since: at(0) },
        { communityId: c.communityId, userId: context.id('dee'), since: at(0) },
        { communityId: c.communityId, userId: context.id('eve'), since: at(3) },
      ],
      at(1),
    );
    expect(result.inserted).to.equal(3);
    await c.membership('dee', false, 2);
    await c.posts([c.post('ben', 4)]);
    expect(await c.postRecord('ana')).to.include({ lastActionId: context.id('p-ben-4') });
    expect(await c.postRecord('eve')).to.include({ lastActionId: context.id('p-ben-4') });
    expect(await c.postRecord('dee')).to.equal(undefined);
    const again = await members(context.storage).importBatch(
      [{ communityId: c.communityId, userId: context.id('ana'), since: at(0) }],
      at(1),
    );
    expect(again).to.deep.equal({ inserted: 0, updated: 0, unchanged: 1 });
  },
);

conformanceCase(
  'memberships: a later list names again a member who left since the last import: a member from its time, the join before it kept',
  async (context) => {
    const c = community(context);
    expect(
      await context.storage.members.importBatch([c.listed('ana', 0), c.listed('ben', 0)], at(1)),
    ).to.deep.equal({
      inserted: 2,
      updated: 0,
      unchanged: 0,
    });
    // Both leave through the worker; Ben leaves again after the next list's time.
    await c.membership('ana', false, 2);
    await c.membership('ben', false, 2);
    await c.membership('ben', true, 3);
    await c.membership('ben', false, 5);
    // Ana is not a member at the new list's time: she is again from it. Ben's leave after that
    // time stands. Both have the list's time stored (updated). Listed again at the same time,
    // nothing changes.
    expect(
      await context.storage.members.importBatch([c.listed('ana', 0), c.listed('ben', 0)], at(4)),
    ).to.deep.equal({
      inserted: 0,
      updated: 2,
      unchanged: 0,
    });
    expect(await context.storage.members.importBatch([c.listed('ana', 0)], at(4))).to.deep.equal({
      inserted: 0,
      updated: 0,
      unchanged: 1,
    });
    await c.posts([c.post('cid', 6)]);
    expect(await c.postRecord('ana')).to.include({ lastActionId: context.id('p-cid-6') });
    expect(await c.postRecord('ben')).to.equal(undefined);
    // The first membership stays as it was: a post from before the leave, arriving late, still
    // reaches her; one from while she was away does not.
    await c.posts([c.post('dee', 1.5), c.post('eve', 3)]);
    const record = await c.postRecord('ana');
    expect(actorIdsOf(record)).to.include(context.id('dee')).and.not.include(context.id('eve'));
  },
);

// Each list's time is a join of its own, processed before everything: a later list adds its own
// and keeps those before it, or it took back the membership an earlier list had restored.
conformanceCase(
  'memberships: a later list keeps each earlier list’s as-of join: a membership one restored is never taken back',
  async (context) => {
    const c = community(context);
    const list = (minute: number) => context.storage.members.importBatch([c.listed('ana', 0)], at(minute));
    await list(1);
    await c.membership('ana', false, 2);
    // Away from 2; the list as of 4 names her: a member again from 4, until she leaves at 6.
    await list(4);
    await c.posts([c.post('ben', 5)]);
    expect(await c.postRecord('ana')).to.include({ lastActionId: context.id('p-ben-5') });
    await c.membership('ana', false, 6);
    // The list as of 7 names her again: a member from 7, her membership from 4 to 6 kept.
    await list(7);
    await c.posts([c.post('cid', 8)]);
    const record = await c.postRecord('ana');
    expect(actorIdsOf(record)).to.deep.equal([context.id('cid'), context.id('ben')]);
    expect(record?.actorsCount).to.equal(2);
    // Posts arriving late: one from inside that membership reaches her, those from her times
    // away do not.
    await c.posts([c.post('dee', 4.5), c.post('eve', 3), c.post('fay', 6.5)]);
    const late = await c.postRecord('ana');
    expect(actorIdsOf(late)).to.deep.equal([context.id('cid'), context.id('ben'), context.id('dee')]);
    expect(late?.actorsCount).to.equal(3);
  },
);

// A list that names a current member records its time too: what a leave from before the list
// does to them cannot depend on whether it arrived before the import or after it.
conformanceCase(
  'memberships: a list naming a current member keeps its as-of join: a leave dated before it ends the same, delivered before the import or after',
  async (context) => {
    const c = community(context);
    await context.storage.members.importBatch([c.listed('ana', 0), c.listed('ben', 0)], at(1));
    // Both leave at 2; Ben's leave arrives before the list as of 4, Ana's after it.
    await c.membership('ben', false, 2);
    const counts = await context.storage.members.importBatch([c.listed('ana', 0), c.listed('ben', 0)], at(4));
    await c.membership('ana', false, 2);
    await c.posts([c.post('cid', 3), c.post('dee', 5)]);
    // The list as of 4 names both: members from 4 on, away from 2 to 4.
    for (const user of ['ana', 'ben']) {
      const record = await c.postRecord(user);
      expect(actorIdsOf(record), user).to.deep.equal([context.id('dee')]);
      expect(record?.actorsCount, user).to.equal(1);
    }
    // Each has the list's time stored anew: counted alike, whatever they were at that time.
    expect(counts).to.deep.equal({ inserted: 0, updated: 2, unchanged: 0 });
  },
);

// MongoDB rewrites the records naming a deleted user a batch at a time (1,000), PostgreSQL a page
// of members at a time (5,000): more records than one batch, each renamed once.
conformanceCase(
  'memberships: a deleted author of a post in a community of 1,200 members shows `Deleted user` in every member’s post record',
  async (context) => {
    const c = community(context);
    const users = Array.from({ length: 1_200 }, (_, index) => `m-${String(index).padStart(4, '0')}`);
    const imported = await context.storage.members.importBatch(
      users.map((user) => ({ communityId: c.communityId, userId: context.id(user), since: at(0) })),
      at(0),
    );
    expect(imported.inserted).to.equal(users.length);
    await c.posts([c.post('xena', 1)]);
    await context.storage.writes.applyProfiles(
      [{ userId: context.id('xena'), displayName: 'Deleted user', deleted: true, at: at(2) }],
      context.write(NOW),
    );
    const names: string[] = [];
    for (let from = 0; from < users.length; from += 50) {
      const records = await Promise.all(users.slice(from, from + 50).map((user) => c.postRecord(user)));
      for (const record of records) names.push(record?.actors.map((actor) => actor.name).join() ?? 'none');
    }
    expect(new Set(names)).to.deep.equal(new Set(['Deleted user']));
    expect(names).to.have.lengthOf(users.length);
  },
  // About 10 s on FerretDB alone; twice that on a loaded CI host passed the default 20 s.
  { timeout: 60_000 },
);
