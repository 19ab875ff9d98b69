import { expect } from 'chai';
import { EVENTS } from '../../../shared/tray/tray-record.ts';
import { MODERATION_DECISIONS } from '../../../tray-service/moderation/decision-doc.ts';
import { createDecisionsRepository } from '../../../tray-service/moderation/decisions-repository.ts';
import { createEventsQueries } from '../../../tray-service/store/events-queries.ts';
import { useMongo } from '../../support/suite-resources.ts';

// Found by the reliability suite: sent again for existing indexes, createIndexes made
// FerretDB 1.24 panic and drop the connection, so every tray-service start after the first crashed.
describe('createEventsQueries(db).ensureIndexes run again (a restart)', () => {
  const mongo = useMongo();
  it('succeeds and keeps one copy of each index', async () => {
    await createEventsQueries(mongo.db).ensureIndexes();
    await createEventsQueries(mongo.db).ensureIndexes();
    await createEventsQueries(mongo.db).ensureIndexes();
    const names = (await mongo.db.collection(EVENTS).listIndexes().toArray()).map((index) =>
      String(index.name),
    );
    expect(names.filter((name) => name.startsWith('admin_')).sort()).to.deep.equal([
      'admin_event_received_desc',
      'admin_received_desc',
      'admin_webhook_received_desc',
    ]);
  });

  it('does the same for the moderation decisions indexes', async () => {
    for (let n = 0; n < 3; n += 1) await createDecisionsRepository(mongo.db).ensureIndexes();
    const names = (await mongo.db.collection(MODERATION_DECISIONS).listIndexes().toArray()).map((index) =>
      String(index.name),
    );
    expect(names.filter((name) => name !== '_id_')).to.have.lengthOf(6);
  });
});
