import { expect } from 'chai';
import { detectStorage } from '../../../../tray-service/storage/mongodb/detect-storage.ts';
import { useFerretOnPostgres } from '../../../support/use-ferret-on-postgres.ts';

describe('detectStorage', () => {
  const ferret = useFerretOnPostgres();

  it('tells FerretDB on PostgreSQL from its explain once a collection exists', async () => {
    const db = ferret.otherDb();
    await db.createCollection('probe');
    expect(await detectStorage(db)).to.equal('ferretdb-postgresql');
  });

  it('does not remember a guess made before any collection existed', async () => {
    const db = ferret.otherDb();
    expect(await detectStorage(db)).to.equal('ferretdb-other');
    await db.createCollection('probe');
    expect(await detectStorage(db)).to.equal('ferretdb-postgresql');
  });

  it('with no collection yet, finds FerretDB’s schema through the PostgreSQL URL', async () => {
    const db = ferret.otherDb();
    // A collection created and dropped again: the schema (and its metadata table) stays.
    await db.createCollection('gone');
    await db.collection('gone').drop();
    expect(await detectStorage(db, { postgresUrl: ferret.postgresUrl })).to.equal('ferretdb-postgresql');
  });
});
