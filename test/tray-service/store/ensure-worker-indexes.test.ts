import { expect } from 'chai';
import { EVENTS, MEMBERSHIPS, TRAY_RECORD_CLAIMS, TRAY_RECORDS } from '../../../shared/tray/tray-record.ts';
import { ensureWorkerIndexes } from '../../../tray-service/store/ensure-worker-indexes.ts';
import { useMongo } from '../../support/suite-resources.ts';

describe('ensureWorkerIndexes', () => {
  const mongo = useMongo();

  it('creates the index of every worker query, and is idempotent', async () => {
    const first = await ensureWorkerIndexes(mongo.db);
    const second = await ensureWorkerIndexes(mongo.db);
    expect(second).to.deep.equal(first);
    const names = async (collection: string) =>
      (await mongo.db.collection(collection).indexes()).map((index) => index.name);
    expect(await names(MEMBERSHIPS)).to.include.members(['fanout', 'member_user']);
    expect(await names(TRAY_RECORDS)).to.include.members(['actor_user', 'record_user', 'expiry']);
    expect(await names(EVENTS)).to.include('expiry');
    expect(await names(TRAY_RECORD_CLAIMS)).to.include('expiry');
  });

  it('uses a TTL index only where the server accepts one', async () => {
    const { ttl } = await ensureWorkerIndexes(mongo.db);
    const expiry = (await mongo.db.collection(TRAY_RECORDS).indexes()).find(
      (index) => index.name === 'expiry',
    );
    expect(expiry?.expireAfterSeconds !== undefined).to.equal(ttl);
  });
});
