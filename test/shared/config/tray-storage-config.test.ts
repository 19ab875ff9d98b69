import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { resolveTrayStorage } from '../../../shared/config/tray-storage-config.ts';
import type { Env } from '../../../shared/config/parse-env.ts';

const databaseUrl = 'postgres://tray:secret@db:5432/tray';
const mongoUri = 'mongodb://mongo:27017';
const storage = (env: Env) => resolveTrayStorage(loadTrayConfig(env));
const failure = (env: Env) =>
  expect(() => storage(env))
    .to.throw(ConfigError)
    .with.property('message');

describe('tray storage configuration', () => {
  describe('with TRAY_STORAGE unset', () => {
    it('runs on PostgreSQL when only DATABASE_URL is set, with the pool defaults', () => {
      expect(storage({ DATABASE_URL: databaseUrl })).to.deep.equal({
        engine: 'postgres',
        url: databaseUrl,
        poolSize: 10,
        statementTimeoutMs: 10_000,
      });
    });

    it('runs on MongoDB when only MONGODB_URI is set, with MONGODB_DB', () => {
      expect(storage({ MONGODB_URI: mongoUri })).to.deep.equal({
        engine: 'mongodb',
        uri: mongoUri,
        dbName: 'tray',
      });
      expect(storage({ MONGODB_URI: mongoUri, MONGODB_DB: 'other' })).to.deep.equal({
        engine: 'mongodb',
        uri: mongoUri,
        dbName: 'other',
      });
    });

    // A list of host:port pairs is no WHATWG URL: the URL check refused every such string.
    it("accepts a replica set's connection string with several hosts, and refuses what the driver would", () => {
      const replicaSet = 'mongodb://a:27017,b:27018,c:27019/?replicaSet=rs0&w=majority';
      expect(storage({ MONGODB_URI: replicaSet })).to.deep.equal({
        engine: 'mongodb',
        uri: replicaSet,
        dbName: 'tray',
      });
      for (const bad of ['mongodb://', 'http://a:27017', 'a:27017'])
        failure({ MONGODB_URI: bad }).that.matches(/MONGODB_URI: expected a MongoDB connection string/);
    });

    // A password written as it is, `%` and all: the drivers throw a URIError when they connect,
    // which start-up took for an unreachable server and waited out before failing.
    it('refuses a URL whose password holds a "%" that starts no escape, naming the variable, not the password', () => {
      failure({ DATABASE_URL: 'postgres://tray:ab%zz@db:5432/tray' })
        .that.includes('DATABASE_URL: its user name or password holds a "%" that starts no escape')
        .and.not.include('ab%zz');
      failure({ MONGODB_URI: 'mongodb://tray:ab%zz@mongo:27017' })
        .that.includes('MONGODB_URI: its user name or password holds a "%" that starts no escape')
        .and.not.include('ab%zz');
      expect(storage({ DATABASE_URL: 'postgres://tray:ab%25zz@db:5432/tray' })).to.deep.include({
        engine: 'postgres',
      });
    });

    // A password's "/" not escaped ends the host early: `postgres://u:12/34@h/db` connected to host
    // "u", port 12, database "34@h/db", and a server answering there quoted the password's end.
    it('refuses a URL whose password holds a "/" or "?" not escaped, naming the variable, not the password', () => {
      for (const bad of ['postgres://tray:12/34@db:5432/tray', 'postgres://tray:12?34@db/tray']) {
        failure({ DATABASE_URL: bad })
          .that.includes('DATABASE_URL: its path, query or fragment holds an "@"')
          .and.not.include('34');
      }
      expect(storage({ DATABASE_URL: 'postgres://tray:12%2F34@db:5432/tray' })).to.deep.include({
        engine: 'postgres',
      });
    });

    // A generated password rarely starts with digits: before its "/" it reads as a port that is
    // none, no URL parses, and the message said only which scheme it must start with.
    it('says how to escape a password that keeps a URL with the right scheme from parsing at all', () => {
      for (const bad of ['postgres://tray:Ab/cd@db/tray', 'postgresql://tray:x?y#z@db/tray'])
        failure({ DATABASE_URL: bad })
          .that.includes('DATABASE_URL: does not read as a URL')
          .and.includes('write "/" as %2F')
          .and.not.include('cd@')
          .and.not.include('starting with');
      failure({ DATABASE_URL: 'mysql://db/tray' }).that.includes('expected a URL starting with postgres://');
    });

    // The URI's path names the driver's default database; it was ignored for `tray` silently.
    // Taking it instead would move an existing tray to an empty database: neither is guessed.
    it('stops start-up naming MONGODB_DB when it is unset and the URI names another database', () => {
      const named = 'mongodb://app:p%2Fw@a:27017,b:27017/myapp?replicaSet=rs0&authSource=admin';
      failure({ MONGODB_URI: named }).that.matches(
        /MONGODB_DB: unset, while MONGODB_URI names the database "myapp": set MONGODB_DB=myapp to use it, or MONGODB_DB=tray/,
      );
      failure({ MONGODB_URI: 'mongodb+srv://app:pw@cluster0.example.net/my.app' }).that.matches(
        /MONGODB_URI names the database "my.app": set MONGODB_DB=<name>/,
      );
      expect(storage({ MONGODB_URI: named, MONGODB_DB: 'myapp' })).to.deep.include({ dbName: 'myapp' });
      expect(storage({ MONGODB_URI: named, MONGODB_DB: 'tray' })).to.deep.include({ dbName: 'tray' });
    });

    it("keeps `tray` when the URI names none, `tray`, or a database of MongoDB's own (to sign in there)", () => {
      for (const path of ['', '/', '/tray', '/admin', '/local', '/config'])
        expect(storage({ MONGODB_URI: `mongodb://app:pw@a:27017${path}` }), path).to.deep.include({
          dbName: 'tray',
        });
    });

    it('refuses to guess when both are set, in one line naming both', () => {
      failure({ DATABASE_URL: databaseUrl, MONGODB_URI: mongoUri }).that.matches(
        /^Invalid configuration: DATABASE_URL, MONGODB_URI: both are set: set TRAY_STORAGE to "postgres" or "mongodb"[^\n]*$/,
      );
    });

    it('refuses to start when neither is set, in one line naming both', () => {
      failure({}).that.matches(
        /^Invalid configuration: DATABASE_URL, MONGODB_URI: no tray storage: set DATABASE_URL \(PostgreSQL\) or MONGODB_URI \(MongoDB\)$/,
      );
    });
  });

  describe('with TRAY_STORAGE set', () => {
    it('uses the adapter it names when both URLs are set', () => {
      const both = { DATABASE_URL: databaseUrl, MONGODB_URI: mongoUri };
      expect(storage({ ...both, TRAY_STORAGE: 'postgres' })).to.include({
        engine: 'postgres',
        url: databaseUrl,
      });
      expect(storage({ ...both, TRAY_STORAGE: 'mongodb' })).to.include({ engine: 'mongodb', uri: mongoUri });
    });

    it('names the URL the chosen adapter is missing', () => {
      failure({ TRAY_STORAGE: 'postgres', MONGODB_URI: mongoUri }).that.matches(
        /^Invalid configuration: DATABASE_URL: TRAY_STORAGE=postgres needs a postgres:\/\/ URL/,
      );
      failure({ TRAY_STORAGE: 'mongodb', DATABASE_URL: databaseUrl }).that.matches(
        /^Invalid configuration: MONGODB_URI: TRAY_STORAGE=mongodb needs a mongodb:\/\/ URL/,
      );
    });

    it('refuses another adapter name, naming the variable and the choices', () => {
      expect(() => loadTrayConfig({ TRAY_STORAGE: 'mysql' }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.equals('Invalid configuration: TRAY_STORAGE: expected "postgres" or "mongodb"');
    });
  });

  describe('DATABASE_URL, PG_POOL_SIZE and PG_STATEMENT_TIMEOUT_MS', () => {
    it('accept a postgresql:// URL and take the pool size and statement timeout', () => {
      const url = 'postgresql://tray@db/tray?sslmode=require';
      expect(
        storage({ DATABASE_URL: url, PG_POOL_SIZE: '25', PG_STATEMENT_TIMEOUT_MS: '2500' }),
      ).to.deep.equal({
        engine: 'postgres',
        url,
        poolSize: 25,
        statementTimeoutMs: 2_500,
      });
    });

    it('refuse a URL of another scheme and sizes out of range, naming each variable', () => {
      for (const [name, value, message] of [
        ['DATABASE_URL', 'mysql://db/tray', 'expected a URL starting with postgres:// or postgresql://'],
        ['PG_POOL_SIZE', '0', 'expected a whole number from 1 to 1000'],
        ['PG_STATEMENT_TIMEOUT_MS', 'soon', 'expected a whole number from 100 to 3600000'],
      ] as const) {
        expect(() => loadTrayConfig({ [name]: value }))
          .to.throw(ConfigError)
          .with.property('message')
          .that.equals(`Invalid configuration: ${name}: ${message}`);
      }
    });
  });

  it('MONGODB_URI has no default: an unset one never points the tray at a local server', () => {
    expect(loadTrayConfig({}).MONGODB_URI).to.equal(undefined);
  });
});
