import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { connectMongo } from '../../shared/mongo/connect-mongo.ts';
import { commandGuard } from './command-guard.ts';
import { runScript } from './run-script.ts';
import { uniqueName } from './suite-resources.ts';
import { testStack } from './test-stack.ts';

/** Removes (and returns) the violations this test caused, so the guard's own test does not fail the run. */
function takeViolations(test: string) {
  const mine = commandGuard.violations.filter((violation) => violation.test === test);
  commandGuard.violations = commandGuard.violations.filter((violation) => violation.test !== test);
  return mine;
}

describe('the command guard (root hook: every MongoClient of the mocha process)', () => {
  const dbName = uniqueName('guard');

  it('records an oversized bulk of updateOne sent through connectMongo, naming the command and the running test', async function () {
    const { db, close } = await connectMongo(testStack().mongoUri, dbName, { appName: 'tests' });
    const bulk = (n: number) =>
      db.collection<{ _id: string; n: number }>('guarded').bulkWrite(
        Array.from({ length: n }, (_, i) => ({
          updateOne: { filter: { _id: `missing${i}` }, update: { $set: { n: i } } },
        })),
      );
    try {
      await bulk(41);
      await bulk(40);
    } finally {
      await db.dropDatabase().catch(() => undefined);
      await close();
    }
    const test = this.test!.fullTitle();
    expect(takeViolations(test)).to.deep.equal([
      {
        test,
        problem: `update on guarded with 41 single-document updates in one command (limit ${commandGuard.limits.maxSingleUpdates})`,
      },
    ]);
  });

  it('records an oversized bulk of updateOne from a client the test created itself (connected implicitly)', async function () {
    const client = new MongoClient(testStack().mongoUri);
    try {
      const collection = client.db(dbName).collection<{ _id: string; n: number }>('guarded');
      await collection.bulkWrite(
        Array.from({ length: 41 }, (_, i) => ({
          updateOne: { filter: { _id: `r${i}` }, update: { $set: { n: i } } },
        })),
      );
      await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
    }
    const test = this.test!.fullTitle();
    expect(takeViolations(test).map((violation) => violation.problem)).to.deep.equal([
      `update on guarded with 41 single-document updates in one command (limit ${commandGuard.limits.maxSingleUpdates})`,
    ]);
  });

  describe('at the end of a run with a violation (a mocha process of its own on the same servers)', () => {
    const run = (strict: string) =>
      runScript(
        'node_modules/mocha/bin/mocha.js',
        ['--config', '.mocharc.json', 'test/fixtures/command-guard/violating-suite.ts'],
        {
          ...process.env,
          MONGODB_URI: testStack().mongoUri,
          REDIS_URL: testStack().redisUrl,
          STRICT_COMMAND_GUARD: strict,
        },
        60_000,
      );

    it('fails the run, naming the command and the test', async function () {
      this.timeout(90_000);
      const result = await run('on');
      expect(result.code).to.not.equal(0);
      expect(result.stdout + result.stderr)
        .to.include('1 passing')
        .and.include('update on guarded with 45 single-document updates in one command')
        .and.include('during: a suite sending an oversized bulk of updateOne passes its own assertions');
    });

    it('with STRICT_COMMAND_GUARD=off, reports the same and passes', async function () {
      this.timeout(90_000);
      const result = await run('off');
      expect(result.code).to.equal(0);
      expect(result.stderr).to.include('update on guarded with 45 single-document updates in one command');
    });
  });
});
