import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { openStorage } from '../../../tray-service/storage/open-storage.ts';
import { readMigrations } from '../../../tray-service/storage/postgres/migrate.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { useMongo } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { usePostgres } from '../../support/use-postgres.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

describe('openStorage', () => {
  const pg = usePostgres();
  const mongo = useMongo();

  it('opens the PostgreSQL adapter on DATABASE_URL, with its schema in place, logging each migration', async () => {
    // Migrations run before the service listens, for minutes after some upgrades: the log is what
    // an operator has to tell a long one from a hang.
    const recorded = recordingLogger();
    const storage = await openStorage(
      { engine: 'postgres', url: pg.url, poolSize: 2, statementTimeoutMs: 5_000 },
      recorded.logger,
    );
    try {
      const latest = Math.max(...readMigrations().map((migration) => migration.version));
      const applied = recorded.lines.filter((line) => line.msg === 'schema migration applied');
      expect(applied.map((line) => line.version)).to.deep.equal(
        Array.from({ length: latest }, (_, index) => index + 1),
      );
      // Named `migration`: as `name`, each line carried that key twice beside the logger's own name.
      expect(applied[0]).to.include({ migration: 'tray' }).and.to.have.property('ms').that.is.a('number');
      expect(applied[0]).not.to.have.property('name');
      expect(recorded.messages.filter((message) => message === 'schema migration applying')).to.have.length(
        latest,
      );
      expect(storage.engine).to.equal('postgres');
      await storage.ping();
      expect(await storage.records.count('u-ana', Date.now())).to.equal(0);
    } finally {
      await storage.close();
    }
  });

  it('opens the MongoDB adapter on MONGODB_URI and MONGODB_DB', async function () {
    this.timeout(60_000);
    const storage = await openStorage(
      { engine: 'mongodb', uri: testStack().mongoUri, dbName: mongo.dbName },
      logger,
    );
    try {
      expect(storage.engine).to.equal('mongodb');
      await storage.ping();
      expect(await storage.records.count('u-ana', Date.now())).to.equal(0);
    } finally {
      await storage.close();
    }
  });
});
