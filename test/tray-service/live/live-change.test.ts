import { expect } from 'chai';
import { CHANGE_SHARDS, changeChannel, shardOf } from '../../../tray-service/live/change-channels.ts';
import { changesOf, marksChanges, parseChanges } from '../../../tray-service/live/live-change.ts';
import { aReaderRecord } from '../../support/tray-record-builder.ts';

describe('live changes on the wire', () => {
  const ana = aReaderRecord({ userId: 'u-ana', targetId: 'p-1', changedAt: 5 });
  const ana2 = aReaderRecord({ userId: 'u-ana', targetId: 'p-2', changedAt: 6 });
  const ben = aReaderRecord({ userId: 'u-ben', targetId: 'p-3', changedAt: 7 });

  it('groups written records into one change per user and brings them back as stored', () => {
    const changes = parseChanges(JSON.stringify(changesOf('record', [ana, ben, ana2])));
    expect(changes.map((change) => change.userId)).to.deep.equal(['u-ana', 'u-ben']);
    const first = changes[0];
    if (first?.kind !== 'record') throw new Error('expected a record change');
    expect(first.records).to.deep.equal([ana, ana2]);
  });

  it('sends only the key, the change time and the one before of records marked read', () => {
    const [change] = marksChanges({ kind: 'read' }, [{ ...ana, changedBefore: 4 }]);
    expect(change).to.deep.equal({
      kind: 'read',
      userId: 'u-ana',
      records: [{ key: ana.key, changedAt: 5, changedBefore: 4 }],
    });
  });

  it("sends a snooze's end with the keys and change times of the records it snoozed, per user", () => {
    const marked = [ana, ben].map((record) => ({ ...record, changedBefore: 1 }));
    const changes = parseChanges(JSON.stringify(marksChanges({ kind: 'snoozed', until: 99 }, marked)));
    expect(changes).to.deep.equal([
      {
        kind: 'snoozed',
        until: 99,
        userId: 'u-ana',
        records: [{ key: ana.key, changedAt: 5, changedBefore: 1 }],
      },
      {
        kind: 'snoozed',
        until: 99,
        userId: 'u-ben',
        records: [{ key: ben.key, changedAt: 7, changedBefore: 1 }],
      },
    ]);
  });

  it('ignores a message it did not publish instead of throwing', () => {
    for (const message of [
      '',
      'not json',
      '{}',
      '[1, null, {"kind": "other", "userId": "u"}]',
      '[{"kind": "record"}]',
    ]) {
      expect(parseChanges(message), message).to.deep.equal([]);
    }
  });

  it('spreads users over a fixed set of channels, the same on every instance', () => {
    const shards = new Set(Array.from({ length: 2_000 }, (_, i) => shardOf(`u-${i}`)));
    expect(Math.min(...shards)).to.be.at.least(0);
    expect(Math.max(...shards)).to.be.below(CHANGE_SHARDS);
    expect(shards.size).to.be.above(CHANGE_SHARDS * 0.9);
    expect(shardOf('u-ana')).to.equal(shardOf('u-ana'));
    expect(changeChannel('tray-live', 7)).to.equal('tray-live:changes:7');
  });
});
