import { expect } from 'chai';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import { testStack } from '../../support/test-stack.ts';

describe('connectMongo (shared/mongo/connect-mongo.ts)', function () {
  this.timeout(60_000);

  // FerretDB 1.24 on PostgreSQL takes two connections of its pool of 50, one after the other, for
  // an update that matches a document: 50 such updates at once each hold one and wait for ever for
  // a second. The tray worker runs 64 jobs at once, and its events' updates once stalled it so.
  describe('the pool', () => {
    it('on FerretDB caps the connections, so more matching updates at once than its pool holds all finish', async () => {
      const connection = await connectMongo(testStack().mongoUri, `pool-${process.pid}`, {
        appName: 'tests',
      });
      try {
        const info = await connection.db.admin().command({ buildInfo: 1 });
        // A real MongoDB (MONGODB_URI set for the tests) keeps the driver's default.
        expect(connection.client.options.maxPoolSize).to.equal(
          typeof info.ferretdbVersion === 'string' ? 20 : 100,
        );
        const docs = connection.db.collection<{ _id: number; n: number; pad: string }>('updates');
        await docs.insertMany(
          Array.from({ length: 300 }, (_, _id) => ({ _id, n: 0, pad: 'x'.repeat(100_000) })),
        );
        // Every connection the client may open is open first, so the updates reach the server at once.
        await Promise.all(Array.from({ length: 120 }, () => connection.db.command({ ping: 1 })));
        const results = await Promise.all(
          Array.from({ length: 300 }, (_, _id) => docs.updateOne({ _id }, { $set: { n: 1 } })),
        );
        expect(results.map((result) => result.modifiedCount)).to.deep.equal(Array(300).fill(1));
      } finally {
        await connection.db.dropDatabase();
        await connection.close();
      }
    });

    it('keeps a pool size the URI names', async () => {
      const uri = new URL(testStack().mongoUri);
      uri.searchParams.set('maxPoolSize', '7');
      const connection = await connectMongo(uri.toString(), `pool-${process.pid}`, { appName: 'tests' });
      try {
        expect(connection.client.options.maxPoolSize).to.equal(7);
      } finally {
        await connection.close();
      }
    });
  });
});
