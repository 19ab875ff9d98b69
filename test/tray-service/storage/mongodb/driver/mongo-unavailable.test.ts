import { expect } from 'chai';
import { createRequire } from 'node:module';
import {
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoNetworkError,
  MongoServerClosedError,
  MongoServerError,
  MongoWriteConcernError,
  type BulkWriteResult,
} from 'mongodb';
import { ignoreDuplicates } from '../../../../../tray-service/storage/mongodb/driver/ignore-duplicates.ts';
import { insertOutcomes } from '../../../../../tray-service/storage/mongodb/driver/insert-outcomes.ts';
import { onlyDuplicateKeys } from '../../../../../tray-service/storage/mongodb/driver/is-duplicate-key.ts';
import {
  isMongoConnectionLost,
  isMongoRefusingWrites,
  isMongoUnavailable,
} from '../../../../../tray-service/storage/mongodb/driver/mongo-unavailable.ts';

// The driver's bulk-write classes it does not export, to build its errors as it does
// (node_modules/mongodb/lib/bulk/common.js): the same classes, not look-alikes.
const bulk = createRequire(import.meta.url)('mongodb/lib/bulk/common.js') as {
  WriteConcernError: new (error: { code: number; errmsg: string }) => object;
  WriteError: new (error: { code: number; index: number; errmsg: string }) => object;
  BulkWriteResult: new (result: object, ordered: boolean) => BulkWriteResult;
};
const waitingForReplication = () =>
  new bulk.WriteConcernError({ code: 64, errmsg: 'waiting for replication timed out' });
const bulkResult = (writeErrors: object[], writeConcernErrors: object[]) =>
  new bulk.BulkWriteResult(
    {
      ok: 1,
      writeErrors,
      writeConcernErrors,
      insertedIds: [],
      nInserted: 1,
      nUpserted: 0,
      nMatched: 0,
      nModified: 0,
      nRemoved: 0,
      upserted: [],
    },
    false,
  );
/** What insertMany and bulkWrite throw (MongoBulkWriteError's callers in the driver). */
const bulkErrors = () => {
  const duplicate = new bulk.WriteError({ code: 11000, index: 0, errmsg: 'E11000 duplicate key error' });
  return {
    // Its only failure: the write concern's, on `err`, with no code of its own.
    concernOnly: new MongoBulkWriteError(
      waitingForReplication() as never,
      bulkResult([], [waitingForReplication()]),
    ),
    // Some documents were duplicates too: those are reported, the write concern only in the result.
    duplicatesAndConcern: new MongoBulkWriteError(
      { message: 'E11000 duplicate key error', code: 11000, writeErrors: [duplicate] } as never,
      bulkResult([duplicate], [waitingForReplication()]),
    ),
    duplicatesOnly: new MongoBulkWriteError(
      { message: 'E11000 duplicate key error', code: 11000, writeErrors: [duplicate] } as never,
      bulkResult([duplicate], []),
    ),
    // A driver failure before the server answered, wrapped.
    network: new MongoBulkWriteError(new MongoNetworkError('connection reset') as never, bulkResult([], [])),
  };
};

// What a replica set answers while it fails over or shuts down cannot be caught live here (FerretDB
// has no replica set): the driver's own error classes, with the codes and messages such servers send.
const serverError = (code: number, errmsg: string) => new MongoServerError({ ok: 0, code, errmsg });

describe('isMongoUnavailable', () => {
  it('takes a failing-over or shutting-down server for "not now"', () => {
    const notNow = [
      serverError(10107, 'not primary'),
      serverError(13435, 'not primary and secondaryOk=false'),
      serverError(11602, 'operation was interrupted because of a replica set state change'),
      serverError(189, 'primary stepped down'),
      serverError(91, 'the server is in quiesce mode and will shut down'),
      serverError(11600, 'interrupted at shutdown'),
      serverError(50, 'operation exceeded time limit'),
      new MongoWriteConcernError({
        ok: 1,
        writeConcernError: { code: 64, errmsg: 'waiting for replication timed out' },
      }),
    ];
    expect(notNow.map(isMongoUnavailable)).to.deep.equal(notNow.map(() => true));
  });

  it('takes FerretDB’s InternalError for "not now" only when it names its PostgreSQL’s failure', () => {
    const backend = [
      'FATAL: terminating connection due to administrator command (SQLSTATE 57P01)',
      'FATAL: the database system is starting up (SQLSTATE 57P03)',
      'failed to connect to `user=postgres database=postgres`: dial error: connection refused',
    ];
    expect(backend.map((message) => isMongoUnavailable(serverError(1, message)))).to.deep.equal([
      true,
      true,
      true,
    ]);
    expect(isMongoUnavailable(serverError(1, 'unexpected operator $frobnicate'))).to.equal(false);
    // A protocol violation is a bug, not an outage, as on PostgreSQL itself.
    expect(isMongoUnavailable(serverError(1, 'ERROR: bad message (SQLSTATE 08P01)'))).to.equal(false);
  });

  // FerretDB 1.24's own words when its PostgreSQL's disk is full (seen on an insert and an upsert).
  it('takes FerretDB’s InternalError of a PostgreSQL refusing writes for "not now", and says it refuses writes', () => {
    const full = serverError(
      1,
      '[msg_insert.go:168 handler.(*Handler).MsgInsert] [collection.go:163 postgresql.(*collection).InsertAll.func1] ERROR: could not extend file: No space left on device (SQLSTATE 53100)',
    );
    const readOnly = serverError(
      1,
      'ERROR: cannot execute INSERT in a read-only transaction (SQLSTATE 25006)',
    );
    const down = serverError(
      1,
      'FATAL: terminating connection due to administrator command (SQLSTATE 57P01)',
    );
    expect([full, readOnly, down].map(isMongoUnavailable)).to.deep.equal([true, true, true]);
    expect([full, readOnly, down].map(isMongoRefusingWrites)).to.deep.equal([true, true, false]);
    expect(isMongoRefusingWrites(serverError(10107, 'not primary'))).to.equal(false);
  });

  it('hands a wrong command on as its own (duplicate key, bad value, unauthorised)', () => {
    const own = [
      serverError(11000, 'E11000 duplicate key error'),
      serverError(2, 'BadValue'),
      serverError(13, 'not authorized'),
    ];
    expect(own.map(isMongoUnavailable)).to.deep.equal([false, false, false]);
    expect(isMongoUnavailable(new Error('anything else'))).to.equal(false);
  });

  it('takes a bulk write’s failures as a single write’s: its write concern’s, and the driver’s it wrapped', () => {
    const errors = bulkErrors();
    expect(isMongoUnavailable(errors.concernOnly)).to.equal(true);
    expect(isMongoUnavailable(errors.duplicatesAndConcern)).to.equal(true);
    expect(isMongoUnavailable(errors.network)).to.equal(true);
    expect(isMongoConnectionLost(errors.network)).to.equal(true);
    expect(isMongoUnavailable(errors.duplicatesOnly)).to.equal(false);
    // A command running when the client was closed (the heartbeat's reconnect replaces it).
    expect(isMongoUnavailable(new MongoClientClosedError())).to.equal(true);
  });

  it('never takes the survivors of a bulk insert for durable when its write concern failed beside duplicates', async () => {
    const errors = bulkErrors();
    expect(await ignoreDuplicates(Promise.reject(errors.duplicatesOnly))).to.deep.equal([0]);
    expect(await insertOutcomes(Promise.reject(errors.duplicatesOnly), 2)).to.deep.equal([
      'duplicate',
      'inserted',
    ]);
    const thrown = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(await thrown(ignoreDuplicates(Promise.reject(errors.duplicatesAndConcern)))).to.equal(
      errors.duplicatesAndConcern,
    );
    expect(await thrown(insertOutcomes(Promise.reject(errors.duplicatesAndConcern), 2))).to.equal(
      errors.duplicatesAndConcern,
    );
    // The check the chart counts, the member import and the decisions make on their own writes:
    // they took such a write for done, and a step-down could then roll its survivors back.
    expect(onlyDuplicateKeys(errors.duplicatesOnly)).to.equal(true);
    expect(onlyDuplicateKeys(errors.duplicatesAndConcern)).to.equal(false);
  });

  // The heartbeat's reconnect closes the client (connect-mongo.ts), and a replica set's
  // reconfiguration or Atlas removes a server: a command waiting for a connection then fails with
  // the pool's or the server's "closed", which read as the command's own fault (a 500 on the API,
  // a job attempt spent by the worker) instead of "not now".
  it('takes a closed pool or server under a waiting command for "not now"', () => {
    const { PoolClosedError } = createRequire(import.meta.url)('mongodb/lib/cmap/errors.js') as {
      PoolClosedError: new (pool: { address: string }) => Error;
    };
    expect(isMongoUnavailable(new PoolClosedError({ address: '127.0.0.1:27017' }))).to.equal(true);
    expect(isMongoUnavailable(new MongoServerClosedError())).to.equal(true);
  });

  it('says apart a lost connection from a server that cannot serve', () => {
    expect(isMongoConnectionLost(new MongoNetworkError('connection reset'))).to.equal(true);
    expect(isMongoConnectionLost(serverError(10107, 'not primary'))).to.equal(false);
  });
});
