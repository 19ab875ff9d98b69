import { expect } from 'chai';
import type { Activity } from '../../../../../tray-service/domain/activity.ts';
import { shrinkRecord } from '../../../../../tray-service/storage/mongodb/grouping/shrink-record.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { aComment } from '../../../../support/activity-builder.ts';

const T = Date.UTC(2026, 10, 22, 12);
const POST = { postId: 'p-1', owner: 'u-owner' };

const record: TrayRecordDoc = {
  _id: 'comment_p-1_u-owner',
  userId: 'u-owner',
  verb: 'comment',
  targetId: 'p-1',
  targetType: 'post',
  targetName: 'Hiking Club',
  parentTargetId: 'c-hike',
  lastActionId: 'cm-z',
  lastActionSegmentNo: 9,
  feed: { kind: 'community', id: 'c-hike', name: 'Hiking Club' },
  actors: [{ userId: 'u-zed', name: 'u-zed', at: T + 5 }],
  actorsCount: 1,
  countFrom: T,
  lastUpdate: T + 5,
  hasRead: true,
  isSeen: true,
  archivedAt: T + 6,
  snoozedUntil: null,
  box: 'archived',
  unreadAt: T + 5,
  expiresAt: new Date(T + 90 * 86_400_000),
  group: '["comment","p-1"]',
  version: 7,
};

describe('shrinkRecord', () => {
  const actions: Activity[] = [
    aComment('u-ann', POST, { id: 'cm-a', at: T + 1 }),
    aComment('u-bob', POST, { id: 'cm-b', at: T + 1 }),
  ];

  it('names the newest action left, ties by action id, and keeps lastUpdate, read and inbox state', () => {
    const next = shrinkRecord(record, actions, []);
    if (next === 'unchanged' || next === 'delete') throw new Error(`got ${next}`);
    expect(next.actors.map((actor) => actor.userId)).to.deep.equal(['u-bob', 'u-ann']);
    expect(next).to.include({ actorsCount: 2, lastActionId: 'cm-b', lastUpdate: T + 5, hasRead: true });
    expect(next).to.include({ box: 'archived', archivedAt: T + 6, version: 8 });
    // The action named is older than lastUpdate now, and lastUpdate is the floor from here on.
    expect(next).to.include({ lastActionAt: T + 1, updateFloor: T + 5 });
    // The removed action's segment goes with it; the newest left has none.
    expect(next).not.to.have.property('lastActionSegmentNo');
  });

  it('is unchanged when the actions left are what it counts, and to be deleted when none is left', () => {
    const next = shrinkRecord(record, actions, []);
    if (next === 'unchanged' || next === 'delete') throw new Error(`got ${next}`);
    expect(shrinkRecord(next, actions, [])).to.equal('unchanged');
    expect(shrinkRecord(record, [], [])).to.equal('delete');
    // Actions before the record's countFrom (a delete-all) and while away do not count.
    expect(shrinkRecord({ ...record, countFrom: T + 2 }, actions, [])).to.equal('delete');
    expect(
      shrinkRecord(record, actions, [
        { joined: false, at: T },
        { joined: true, at: T + 2 },
      ]),
    ).to.equal('delete');
  });
});
