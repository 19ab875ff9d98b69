import { deletedActor } from '../../../../../tray-service/domain/deleted-user.ts';
import { expect } from 'chai';
import fc from 'fast-check';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import type { Activity } from '../../../../../tray-service/domain/activity.ts';
import {
  applyActivity,
  recomputeRecord,
  renameActor,
} from '../../../../../tray-service/storage/mongodb/grouping/apply-activity.ts';
import { groupActors } from '../../../../../tray-service/domain/group-actors.ts';

const NOW = Date.UTC(2026, 10, 22, 12);

function activity(actor: string, at: number, actionId = `cm-${actor}-${at}`): Activity {
  return {
    verb: 'comment',
    targetId: 'p-1',
    targetType: 'post',
    targetName: 'Hiking Club',
    parentTargetId: 'c-hike',
    lastActionId: actionId,
    lastActionSegmentNo: at,
    feed: { kind: 'community', id: 'c-hike', name: 'Hiking Club' },
    actor: { userId: actor, name: actor.toUpperCase() },
    at,
    audience: { kind: 'user', userId: 'u-owner' },
  };
}

/** The store's part, in memory: each action joins the group's actors before the record is recomputed. */
function fold(
  activities: Activity[],
  start?: TrayRecordDoc,
  known: Activity[] = [],
): TrayRecordDoc | undefined {
  let record = start;
  const seen = [...known];
  for (const next of activities) {
    seen.push(next);
    const actors = groupActors(seen.map((a) => ({ actor: a.actor, at: a.at, actionId: a.lastActionId })));
    const applied = applyActivity(record, next, 'u-owner', { retentionDays: 90, actors, now: NOW });
    if (applied !== 'unchanged') record = applied;
  }
  return record;
}

const activities = fc.array(
  fc.record({
    actor: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'u-owner'),
    at: fc.integer({ min: 0, max: 50 }),
  }),
  { minLength: 1, maxLength: 25 },
);

/** Distinct actors other than the owner, each at their latest action, newest first. */
function expectedActors(acts: Activity[]): Activity[] {
  const latest = new Map<string, Activity>();
  for (const act of acts) {
    if (act.actor.userId === 'u-owner') continue;
    const seen = latest.get(act.actor.userId);
    if (!seen || act.at > seen.at || (act.at === seen.at && act.lastActionId > seen.lastActionId))
      latest.set(act.actor.userId, act);
  }
  return [...latest.values()].sort((x, y) => y.at - x.at || (y.lastActionId > x.lastActionId ? 1 : -1));
}

// The grouping core alone (no I/O): properties the queue tests cannot cover exhaustively.
describe('applyActivity (grouping core)', () => {
  it('is idempotent: re-applying any activity already applied changes nothing', () => {
    fc.assert(
      fc.property(activities, fc.nat(), (list, pick) => {
        const acts = list.map(({ actor, at }) => activity(actor, at));
        const record = fold(acts);
        if (!record) expect.fail('the first activity starts a record');
        const again = acts[pick % acts.length]!;
        const actors = groupActors(acts.map((a) => ({ actor: a.actor, at: a.at, actionId: a.lastActionId })));
        expect(applyActivity(record, again, 'u-owner', { retentionDays: 90, actors, now: NOW + 1 })).to.equal(
          'unchanged',
        );
      }),
    );
  });

  it('does not depend on delivery order (out-of-order delivery gives the same record)', () => {
    fc.assert(
      fc.property(activities, (list) => {
        const acts = list.map(({ actor, at }) => activity(actor, at));
        const strip = (record: TrayRecordDoc | undefined) => {
          if (!record) return undefined;
          const { version: _version, ...rest } = record;
          return rest;
        };
        expect(strip(fold([...acts].reverse()))).to.deep.equal(strip(fold(acts)));
      }),
    );
  });

  it('keeps actorsCount = distinct actors but the recipient, and the 3 newest of them newest first', () => {
    fc.assert(
      fc.property(activities, (list) => {
        const acts = list.map(({ actor, at }) => activity(actor, at));
        const record = fold(acts);
        const expected = expectedActors(acts);
        if (expected.length === 0) {
          // Only the recipient acted (which the recipients' lists leave out before this core): the
          // record, if any, names and counts no one.
          expect(record?.actorsCount ?? 0).to.equal(0);
          expect(record?.actors ?? []).to.deep.equal([]);
          return;
        }
        expect(record?.actorsCount).to.equal(expected.length);
        expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(
          expected.slice(0, 3).map((act) => act.actor.userId),
        );
        expect(record?.lastUpdate).to.equal(Math.max(...acts.map((act) => act.at)));
      }),
    );
  });

  it('never flips a read record back to unread on a replay, but does on a new actor', () => {
    const read = { ...fold([activity('a', 1)])!, hasRead: true };
    const actors = groupActors([{ actor: { userId: 'a', name: 'A' }, at: 1, actionId: 'cm-a-1' }]);
    expect(
      applyActivity(read, activity('a', 1), 'u-owner', { retentionDays: 90, actors, now: NOW }),
    ).to.equal('unchanged');
    const withB = groupActors([
      { actor: { userId: 'a', name: 'A' }, at: 1, actionId: 'cm-a-1' },
      { actor: { userId: 'b', name: 'B' }, at: 0, actionId: 'cm-b-0' },
    ]);
    expect(
      applyActivity(read, activity('b', 0), 'u-owner', { retentionDays: 90, actors: withB, now: NOW }),
    ).to.include({ hasRead: false, actorsCount: 2 });
  });

  it('does not count actors whose latest action is older than the record (a record re-created after delete-all)', () => {
    const earlier = [activity('a', 1), activity('b', 2)];
    const record = fold([activity('c', 10)], undefined, earlier);
    expect(record).to.include({ actorsCount: 1, countFrom: 10 });
    expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['c']);
  });

  it('stamps unreadAt with the tray clock, not the activity time (a late activity is still unread)', () => {
    const record = fold([activity('a', 5)]);
    expect(record).to.include({ unreadAt: NOW, lastUpdate: 5, hasRead: false });
  });

  it('keeps a record the same size however many actors its target has', () => {
    const many = Array.from({ length: 500 }, (_, index) => activity(`x${index}`, index));
    const record = fold(many);
    expect(record?.actorsCount).to.equal(500);
    expect(record?.actors).to.have.length(3);
    expect(JSON.stringify(record).length).to.be.below(1_500);
  });
});

describe('applyActivity: the fields of a written record', () => {
  const one = (a: Activity[]) =>
    groupActors(a.map((x) => ({ actor: x.actor, at: x.at, actionId: x.lastActionId })));
  const context = (acts: Activity[], now = NOW) => ({ retentionDays: 90, actors: one(acts), now });

  it('expires retentionDays after lastUpdate', () => {
    const at = Date.UTC(2026, 10, 20, 23, 30);
    const record = applyActivity(undefined, activity('a', at), 'u-owner', context([activity('a', at)]));
    expect((record as TrayRecordDoc).expiresAt.getTime()).to.equal(at + 90 * 86_400_000);
  });

  it('starts a new record at the tray clock as version, and steps an existing one by one', () => {
    const first = applyActivity(undefined, activity('a', 1), 'u-owner', context([activity('a', 1)]));
    expect(first).to.include({ version: NOW });
    const acts = [activity('a', 1), activity('b', 2)];
    const next = applyActivity(first as TrayRecordDoc, activity('b', 2), 'u-owner', context(acts, NOW + 5));
    expect(next).to.include({ version: NOW + 1, unreadAt: NOW + 5 });
  });

  it('takes the optional fields from the newest activity: present, or left out', () => {
    const withAll: Activity = { ...activity('a', 1), mentionIn: 'comment' };
    const bare: Activity = { ...activity('b', 2) };
    delete bare.parentTargetId;
    delete bare.lastActionSegmentNo;
    const first = applyActivity(undefined, withAll, 'u-owner', context([withAll])) as TrayRecordDoc;
    expect(first).to.include({ parentTargetId: 'c-hike', lastActionSegmentNo: 1, mentionIn: 'comment' });
    const next = applyActivity(first, bare, 'u-owner', context([withAll, bare])) as TrayRecordDoc;
    expect(next).to.not.have.any.keys('parentTargetId', 'lastActionSegmentNo', 'mentionIn');
    // An older activity delivered late keeps the newest's fields, the optional ones included.
    const late: Activity = { ...activity('c', 0), lastActionSegmentNo: 99 };
    const after = applyActivity(first, late, 'u-owner', context([withAll, late])) as TrayRecordDoc;
    expect(after).to.include({
      lastActionId: first.lastActionId,
      lastActionSegmentNo: 1,
      mentionIn: 'comment',
    });
    // ... and leaves out the ones the newest did not have.
    const lateToBare: Activity = { ...activity('d', 1), mentionIn: 'post' };
    const kept = applyActivity(
      next,
      lateToBare,
      'u-owner',
      context([withAll, bare, lateToBare]),
    ) as TrayRecordDoc;
    expect(kept).to.include({ lastActionId: bare.lastActionId });
    expect(kept).to.not.have.any.keys('parentTargetId', 'lastActionSegmentNo', 'mentionIn');
  });
});

describe('recomputeRecord (a member’s joins and leaves changed while a write ran)', () => {
  const both = [activity('a', 1), activity('b', 5)];
  const record = fold(both)!;
  const options = { retentionDays: 90, now: NOW };

  // lastUpdate orders the history: lowered, the record would drop below a walk that already
  // returned it, and the walk would return it again (docs/tray-api.md#paging-v3-startafternextpage). A removal keeps it
  // the same way.
  it('takes back an action of the time away and names the newest remaining one, lastUpdate kept', () => {
    const shrunk = recomputeRecord(record, both, [{ joined: false, at: 3 }], options) as TrayRecordDoc;
    expect(shrunk).to.include({
      actorsCount: 1,
      lastActionId: 'cm-a-1',
      lastActionAt: 1,
      lastUpdate: 5,
      version: record.version + 1,
    });
    expect(shrunk.expiresAt).to.deep.equal(record.expiresAt);
  });

  it('names a newer action that counts again once the time away shrinks, in a repeated round (a join stored meanwhile)', () => {
    const shrunk = recomputeRecord(record, both, [{ joined: false, at: 3 }], options) as TrayRecordDoc;
    const repeated = { ...options, namesNewer: true };
    const back = recomputeRecord(
      shrunk,
      both,
      [
        { joined: false, at: 3 },
        { joined: true, at: 4 },
      ],
      repeated,
    ) as TrayRecordDoc;
    expect(back).to.include({
      actorsCount: 2,
      lastActionId: 'cm-b-5',
      lastUpdate: 5,
      lastActionSegmentNo: 5,
    });
    expect(back.actors.map((actor) => actor.userId)).to.deep.equal(['b', 'a']);
    expect(
      recomputeRecord(
        back,
        both,
        [
          { joined: false, at: 3 },
          { joined: true, at: 4 },
        ],
        repeated,
      ),
    ).to.equal('unchanged');
  });

  it('keeps naming its action when a newer one counts that it never showed, outside a repeated round', () => {
    // Made again from cm-a-1 after a delete-all, while the group still holds cm-b-5 from before it.
    const remade = fold([activity('a', 1)])!;
    const again = recomputeRecord(remade, both, [{ joined: false, at: 7 }], options) as TrayRecordDoc;
    expect(again).to.include({ actorsCount: 2, lastActionId: 'cm-a-1', lastUpdate: 1 });
  });

  it('is to be deleted when no action remains', () => {
    expect(recomputeRecord(record, both, [{ joined: false, at: 0 }], options)).to.equal('delete');
  });
});

describe('renameActor (a deleted user)', () => {
  const record = fold([activity('a', 1), activity('b', 2)])!;
  it("rewrites the user's snapshots without their images, marked deleted, one version up", () => {
    const withImage = {
      ...record,
      actors: record.actors.map((actor) => ({ ...actor, imageUrl: 'https://img/x.png' })),
    };
    const renamed = renameActor(withImage, deletedActor('a'));
    expect(renamed).to.not.equal('unchanged');
    const next = renamed as TrayRecordDoc;
    expect(next.version).to.equal(record.version + 1);
    expect(next.actors.find((actor) => actor.userId === 'a')).to.deep.equal({
      userId: 'a',
      name: 'Deleted user',
      deleted: true,
      at: 1,
    });
    expect(next.actors.find((actor) => actor.userId === 'b')).to.include({
      name: 'B',
      imageUrl: 'https://img/x.png',
    });
  });
  it('is unchanged for a user without a snapshot, or already renamed', () => {
    expect(renameActor(record, deletedActor('zz'))).to.equal('unchanged');
    const once = renameActor(record, deletedActor('a')) as TrayRecordDoc;
    expect(renameActor(once, deletedActor('a'))).to.equal('unchanged');
  });
  it('marks a snapshot renamed before snapshots carried the mark', () => {
    const unmarked = {
      ...record,
      actors: record.actors.map((actor) =>
        actor.userId === 'a' ? { ...actor, name: 'Deleted user' } : actor,
      ),
    };
    const marked = renameActor(unmarked, deletedActor('a')) as TrayRecordDoc;
    expect(marked.actors.find((actor) => actor.userId === 'a')).to.include({ deleted: true });
  });
});
