import { expect } from 'chai';
import { MongoNetworkError, MongoServerError, MongoWriteConcernError } from 'mongodb';
import {
  isMongoConnectionLost,
  isMongoUnavailable,
} from '../../../../tray-service/storage/mongodb/mongo-unavailable.ts';

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

  it('hands a wrong command on as its own (duplicate key, bad value, unauthorised)', () => {
    const own = [
      serverError(11000, 'E11000 duplicate key error'),
      serverError(2, 'BadValue'),
      serverError(13, 'not authorized'),
    ];
    expect(own.map(isMongoUnavailable)).to.deep.equal([false, false, false]);
    expect(isMongoUnavailable(new Error('anything else'))).to.equal(false);
  });

  it('says apart a lost connection from a server that cannot serve', () => {
    expect(isMongoConnectionLost(new MongoNetworkError('connection reset'))).to.equal(true);
    expect(isMongoConnectionLost(serverError(10107, 'not primary'))).to.equal(false);
  });
});
