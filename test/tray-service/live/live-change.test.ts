import { expect } from 'chai';
import { CHANGE_SHARDS, changeChannel, shardOf } from '../../../tray-service/live/change-channels.ts';
import {
  changesOf,
  lostSince,
  marksChanges,
  parseChanges,
  type LiveChange,
} from '../../../tray-service/live/live-change.ts';
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

  it("names where a lost change's streams catch up from: its earliest change, or now for a change that names none", () => {
    const marked = [ana, ana2].map((record) => ({ ...record, changedBefore: 1 }));
    expect(lostSince(changesOf('record', [ana2, ana])[0] as LiveChange, 100)).to.equal(5);
    expect(lostSince(marksChanges({ kind: 'read' }, marked)[0] as LiveChange, 100)).to.equal(5);
    expect(lostSince({ kind: 'cleared', userId: 'u-ana', at: 9 }, 100)).to.equal(9);
    expect(lostSince({ kind: 'resync', userId: 'u-ana', since: 3 }, 100)).to.equal(3);
    expect(lostSince({ kind: 'removed', userId: 'u-ana', ids: [ana.key] }, 100)).to.equal(100);
    expect(lostSince({ kind: 'last-read', userId: 'u-ana' }, 100)).to.equal(100);
  });

  it('brings a resync back with its time, and ignores one without', () => {
    const resync = { kind: 'resync', userId: 'u-ana', since: 3 };
    expect(parseChanges(JSON.stringify([resync, { kind: 'resync', userId: 'u-ben' }]))).to.deep.equal([
      resync,
    ]);
  });

  it('ignores a message it did not publish instead of throwing', () => {
    for (const message of [
      '',
      'not json',
      '{}',
      '[1, null, {"kind": "other", "userId": "u"}]',
      '[{"kind": "record"}]',
      '[{"kind": "replaced", "userId": "u"}]',
    ]) {
      expect(parseChanges(message), message).to.deep.equal([]);
    }
  });

  it('brings back which stream of a user a newer one replaced', () => {
    const replaced = { kind: 'replaced', userId: 'u-ana', streamId: '00000000a-x' };
    expect(parseChanges(JSON.stringify([replaced]))).to.deep.equal([replaced]);
  });

  it('spreads users over a fixed set of channels, the same on every instance', () => {
    const shards = new Set(Array.from({ length: 2_000 }, (_, i) => shardOf(`u-${i}`)));
    expect(Math.min(...shards)).to.be.at.least(0);
    expect(Math.max(...shards)).to.be.below(CHANGE_SHARDS);
    expect(shards.size).to.be.above(CHANGE_SHARDS * 0.9);
    // Fixed values, not the function against itself: instances of different versions share the
    // channels during a rolling upgrade, so a user's shard may never change (SHA-256, mod 256).
    expect(shardOf('u-ana')).to.equal(13);
    expect(shardOf('u-ben')).to.equal(27);
    expect(changeChannel('tray-live', 7)).to.equal('tray-live:changes:7');
  });
});
