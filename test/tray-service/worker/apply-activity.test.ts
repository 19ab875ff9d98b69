import { expect } from 'chai';
import fc from 'fast-check';
import type { TrayRecordDoc } from '../../../shared/tray/tray-record.ts';
import type { Activity } from '../../../tray-service/worker/activity.ts';
import { applyActivity } from '../../../tray-service/worker/apply-activity.ts';

const options = { retentionDays: 90 };

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

function fold(activities: Activity[], start?: TrayRecordDoc): TrayRecordDoc | undefined {
  let record = start;
  for (const next of activities) {
    const applied = applyActivity(record, next, 'u-owner', options);
    if (applied !== 'unchanged') record = applied;
  }
  return record;
}

const activities = fc.array(
  fc.record({ actor: fc.constantFrom('a', 'b', 'c', 'd', 'e'), at: fc.integer({ min: 0, max: 50 }) }),
  { minLength: 1, maxLength: 25 },
);

// The grouping core alone (no I/O): properties the queue tests cannot cover exhaustively.
describe('applyActivity (grouping core)', () => {
  it('is idempotent: re-applying any activity already applied changes nothing', () => {
    fc.assert(
      fc.property(activities, fc.nat(), (list, pick) => {
        const acts = list.map(({ actor, at }) => activity(actor, at));
        const record = fold(acts)!;
        expect(applyActivity(record, acts[pick % acts.length]!, 'u-owner', options)).to.equal('unchanged');
      }),
    );
  });

  it('does not depend on delivery order (out-of-order delivery gives the same record)', () => {
    fc.assert(
      fc.property(activities, (list) => {
        const acts = list.map(({ actor, at }) => activity(actor, at));
        const strip = (record: TrayRecordDoc | undefined) => {
          const { version: _version, actorLog, ...rest } = record!;
          return { ...rest, actorLog: [...actorLog].sort((x, y) => x.userId.localeCompare(y.userId)) };
        };
        expect(strip(fold([...acts].reverse()))).to.deep.equal(strip(fold(acts)));
      }),
    );
  });

  it('keeps actorsCount = distinct actors, and the 3 newest distinct actors newest first', () => {
    fc.assert(
      fc.property(activities, (list) => {
        const acts = list.map(({ actor, at }) => activity(actor, at));
        const record = fold(acts)!;
        const latest = new Map<string, Activity>();
        for (const act of acts) {
          const seen = latest.get(act.actor.userId);
          if (!seen || act.at > seen.at || (act.at === seen.at && act.lastActionId > seen.lastActionId))
            latest.set(act.actor.userId, act);
        }
        const expected = [...latest.values()]
          .sort((x, y) => y.at - x.at || (y.lastActionId > x.lastActionId ? 1 : -1))
          .slice(0, 3)
          .map((act) => act.actor.userId);
        expect(record.actorsCount).to.equal(latest.size);
        expect(record.actors.map((actor) => actor.userId)).to.deep.equal(expected);
        expect(record.lastUpdate).to.equal(Math.max(...acts.map((act) => act.at)));
      }),
    );
  });

  it('never flips a read record back to unread on a replay, but does on a new actor', () => {
    const read = { ...fold([activity('a', 1)])!, hasRead: true };
    expect(applyActivity(read, activity('a', 1), 'u-owner', options)).to.equal('unchanged');
    expect(applyActivity(read, activity('b', 0), 'u-owner', options)).to.have.property('hasRead', false);
  });
});
