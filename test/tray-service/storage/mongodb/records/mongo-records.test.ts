import { expect } from 'chai';
import { HOUR_MS } from '../../../../../shared/time/durations.ts';
import { encodeRecordKey } from '../../../../../tray-service/domain/record-key.ts';
import { trayRecordsCollection } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { createMongoRecords } from '../../../../../tray-service/storage/mongodb/records/mongo-records.ts';
import { streamCatchUp } from '../../../../../tray-service/use-cases/stream-catch-up.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { aTrayRecord, insertRecords } from '../../../../support/tray-record-builder.ts';

const NOW = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;

// Records written before keys were escaped keep their plain-join `_id` (`verb_target_user`) until
// they expire (docs/storage.md): where a target id holds `_`, that `_id` sorts after the escaped key
// a reader is given (`%` before `_`), and a catch-up page continued from the key read them again.
describe('MongoDB records: a stream’s catch-up across records stored under their former keys', function () {
  this.timeout(30_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, [trayRecordsCollection]));
  /** A catch-up from the start in pages of `limit`: the targets sent, and the pages (10 at most). */
  const catchUp = async (userId: string, limit: number) => {
    const records = createMongoRecords(mongo.db, { lastRead: { latest: () => Promise.resolve(0) } });
    const seen: string[] = [];
    let pages = 0;
    for await (const page of streamCatchUp({ records }, userId, 0, NOW, limit)) {
      seen.push(...page.map((record) => record.targetId));
      if ((pages += 1) > 10) break;
    }
    return { seen, pages };
  };

  it('reads every record changed since, each once, in pages, ending', async () => {
    const userId = 'u-legacy';
    const changedAt = NOW - 1_000;
    const legacy = ['p_a', 'p_b', 'p_c'].map((targetId) =>
      aTrayRecord({
        userId,
        targetId,
        lastUpdate: NOW - HOUR_MS,
        changedAt,
        _id: `comment_${targetId}_${userId}`,
      }),
    );
    const escaped = ['p_d', 'p_e'].map((targetId) =>
      aTrayRecord({
        userId,
        targetId,
        lastUpdate: NOW - HOUR_MS,
        changedAt,
        _id: encodeRecordKey({ verb: 'comment', targetId, userId }),
      }),
    );
    await insertRecords(mongo.db, [...legacy, ...escaped]);
    const { seen, pages } = await catchUp(userId, 2);
    expect(pages).to.be.at.most(3);
    expect(seen.sort()).to.deep.equal(['p_a', 'p_b', 'p_c', 'p_d', 'p_e']);
  });

  // New activity on a group whose former record still lives writes a second record under the
  // escaped key: both hand out one key, and a page that ended on either could not say which, so
  // went on past the records between the two or read them again for ever. The new one is sent.
  it('sends each key once, the record under the escaped key, when one group has a record under each', async () => {
    const userId = 'u-both';
    const changedAt = NOW - 1_000;
    const at = (targetId: string, _id: string) =>
      aTrayRecord({ userId, targetId, lastUpdate: NOW - HOUR_MS, changedAt, _id });
    const escaped = (targetId: string) => encodeRecordKey({ verb: 'comment', targetId, userId });
    await insertRecords(mongo.db, [
      at('p_a', `comment_p_a_${userId}`),
      at('p_a', escaped('p_a')),
      at('p_b', escaped('p_b')),
      at('p-c', escaped('p-c')),
    ]);
    const { seen, pages } = await catchUp(userId, 1);
    expect(pages).to.be.at.most(4);
    expect(seen.sort()).to.deep.equal(['p-c', 'p_a', 'p_b']);
  });
});
