import { expect } from 'chai';
import { MongoClient, type Db } from 'mongodb';
import {
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { casUpdateRecords } from '../../../../../tray-service/storage/mongodb/compare-and-set/cas-update-records.ts';
import { claimVersions } from '../../../../../tray-service/storage/mongodb/compare-and-set/claim-versions.ts';
import { startBlackholeProxy, type BlackholeProxy } from '../../../../support/blackhole-proxy.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { aTrayRecord } from '../../../../support/tray-record-builder.ts';

/*
 * A command that ran on the server whose answer never came back (a connection cut after the
 * write, a server restarted between its commit and its reply): the driver reports it failed, and
 * the shared insert runs again caller by caller (coalesced-writes.ts), meeting its own documents.
 * The writes go through a TCP proxy to the real FerretDB that drops the server's bytes.
 */
describe('compare-and-set when an insert went in and its answer was lost', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  let proxy: BlackholeProxy;
  let client: MongoClient;
  let db: Db;

  before(async () => {
    await ensureTestCollections(mongo.db, trayCollections);
    proxy = await startBlackholeProxy(Number(new URL(testStack().mongoUri).port));
  });
  after(() => proxy.close());

  // A client of its own per case: the proxy loses the answers on the connections open now, and the
  // commands after the lost one run on new connections, which it carries.
  beforeEach(async () => {
    client = new MongoClient(`mongodb://127.0.0.1:${proxy.port}/`, {
      directConnection: true,
      socketTimeoutMS: 1_500,
      // The monitor's connection loses its answers too: its check then gives up in 2 s, not 30.
      connectTimeoutMS: 2_000,
      serverSelectionTimeoutMS: 10_000,
      monitorCommands: true,
    });
    await client.connect();
    db = client.db(mongo.dbName);
    await db.command({ ping: 1 });
  });
  afterEach(() => client.close());

  /** Loses the answer of the first insert into `collection`, sent from now on. */
  const loseFirstInsertInto = (collection: string) =>
    client.once('commandStarted', function lose(event) {
      if (event.commandName === 'insert' && event.command.insert === collection) proxy.loseReplies();
      else client.once('commandStarted', lose);
    });

  it('wins the claims its own insert stored: each caller of the shared command keeps its versions', async () => {
    loseFirstInsertInto(TRAY_RECORD_CLAIMS);
    const claim = (recordId: string, owner: string) =>
      claimVersions(db, [{ recordId, version: 2, state: `state-of-${recordId}` }], {
        owner,
        takeoverMs: 60_000,
      });
    // Two jobs in one tick share one insert command.
    const [first, second] = await Promise.all([claim('lost-a', 'job-a'), claim('lost-b', 'job-b')]);
    expect([...first]).to.deep.equal(['lost-a']);
    expect([...second]).to.deep.equal(['lost-b']);
  });

  it('reports a new record its own insert stored as written, once, with the state stored', async () => {
    const records = [aTrayRecord({ userId: 'lost-1' }), aTrayRecord({ userId: 'lost-2' })];
    loseFirstInsertInto(TRAY_RECORDS);
    const told: TrayRecordDoc[] = [];
    const results = await Promise.all(
      records.map((record) =>
        casUpdateRecords(db, [record._id], (_key, current) => (current ? 'unchanged' : record), {
          owner: `job-${record.userId}`,
          onWritten: async (written) => void told.push(...written),
        }),
      ),
    );
    expect(results.map((result) => result.written)).to.deep.equal([1, 1]);
    expect(told.map((record) => record._id).sort()).to.deep.equal(records.map((record) => record._id).sort());
    for (const record of told)
      expect(
        await mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ _id: record._id }),
      ).to.deep.equal(record);
  });
});
