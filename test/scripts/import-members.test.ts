import { expect } from 'chai';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MEMBERSHIPS } from '../../tray-service/storage/mongodb/collections/collection-names.ts';
import {
  membershipId,
  type MembershipDoc,
} from '../../tray-service/storage/mongodb/collections/memberships-collection.ts';
import { membershipIntervals } from '../../tray-service/domain/membership-intervals.ts';
import { importedEdges } from '../../tray-service/storage/mongodb/memberships/membership-changes.ts';
import { untilWaitingForLock } from '../support/until-waiting-for-lock.ts';
import { cleanEnv, repoRoot, runScript } from '../support/run-script.ts';
import { usePostgres } from '../support/use-postgres.ts';
import { useMongo } from '../support/suite-resources.ts';
import { testStack } from '../support/test-stack.ts';

/** Stderr less the progress lines a run not on a terminal writes (scripts/lib/cli.ts). */
const withoutProgress = (stderr: string) => stderr.replace(/^importing: .*\n/gm, '');

describe('scripts/import-members.ts', function () {
  this.timeout(180_000);
  const mongo = useMongo();
  let dir: string;
  let env: NodeJS.ProcessEnv;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'import-members-'));
    env = cleanEnv({ MONGODB_URI: testStack().mongoUri, MONGODB_DB: mongo.dbName });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const members = () => mongo.db.collection<MembershipDoc>(MEMBERSHIPS);
  const run = (args: string[]) => runScript('scripts/import-members.ts', args, env, 170_000);

  // Eight batches, the last one partial: a bigger file adds time (50,000 lines took a minute on
  // FerretDB), not another path through the script.
  describe('with a 5,000-member CSV file, in batches of 700', () => {
    it('inserts every membership, and a re-run changes nothing', async () => {
      const file = join(dir, 'members.csv');
      const lines = ['communityId,userId'];
      for (let i = 0; i < 5_000; i += 1) lines.push(`c-${i % 100},u-${i}`);
      writeFileSync(file, `${lines.join('\n')}\n`);

      const first = await run([file, '--as-of', '2026-11-20T00:00:00Z', '--batch-size', '700']);
      expect(withoutProgress(first.stderr)).to.equal('');
      expect(first.code).to.equal(0);
      expect(first.stdout).to.include('5000 lines, 5000 inserted, 0 updated, 0 unchanged, 0 invalid');
      expect(await members().countDocuments({ communityId: { $regex: '^c-' } })).to.equal(5_000);
      expect(await members().findOne({ _id: membershipId('c-7', 'u-107') })).to.deep.equal({
        _id: membershipId('c-7', 'u-107'),
        communityId: 'c-7',
        userId: 'u-107',
        active: true,
        since: Date.parse('2026-11-20T00:00:00Z'),
        updatedAt: Date.parse('2026-11-20T00:00:00Z'),
        asOf: [Date.parse('2026-11-20T00:00:00Z')],
      });
      const snapshot = await members().find({}).sort({ _id: 1 }).toArray();

      // The same import again (the list as of the same time).
      const second = await run([file, '--as-of', '2026-11-20T00:00:00Z', '--batch-size', '700']);
      expect(second.code).to.equal(0);
      expect(second.stdout).to.include('5000 lines, 0 inserted, 0 updated, 5000 unchanged, 0 invalid');
      expect(await members().find({}).sort({ _id: 1 }).toArray()).to.deep.equal(snapshot);
    });
  });

  // The list was taken no later than its file was written; "now" moved with every run, so a re-run
  // to finish an interrupted import brought back the members who had left in between.
  describe('without --as-of, run again after a member left', () => {
    it('reads the list as of its file time, so the leave stays', async () => {
      const file = join(dir, 'default-as-of.csv');
      writeFileSync(file, 'communityId,userId\nc-asof,u-stays\nc-asof,u-leaves\n');
      const listTaken = Date.now() - 60_000;
      utimesSync(file, listTaken / 1000, listTaken / 1000);

      const first = await run([file]);
      expect(first.code).to.equal(0);
      expect(first.stdout).to.include(`as of ${new Date(listTaken).toISOString()} (the file's time)`);
      const id = membershipId('c-asof', 'u-leaves');
      expect(await members().findOne({ _id: id })).to.include({ active: true, since: listTaken });
      // The tray stores the leave, as its worker does, at the leave's time (after the list).
      const leftAt = Date.now() - 1_000;
      await members().updateOne({ _id: id }, { $set: { active: false, updatedAt: leftAt } });

      const again = await run([file]);
      expect(again.code).to.equal(0);
      expect(again.stdout).to.include('2 lines, 0 inserted, 0 updated, 2 unchanged, 0 invalid');
      expect(await members().findOne({ _id: id })).to.include({ active: false, updatedAt: leftAt });
    });

    // Fixing the invalid lines in an editor moves the file's time past the leaves stored since.
    it('says the time it reads the list as before it starts, and with invalid lines, to run again with --as-of', async () => {
      const file = join(dir, 'invalid-lines.csv');
      writeFileSync(file, 'communityId,userId\nc-fix,u-ok\nc-fix\n');
      const listTaken = Date.now() - 60_000;
      utimesSync(file, listTaken / 1000, listTaken / 1000);
      const shown = new Date(listTaken).toISOString();

      const result = await run([file]);
      expect(result.code).to.equal(3);
      expect(result.stdout.split('\n')[0]).to.equal(`importing ${file} as of ${shown} (the file's time)`);
      expect(result.stderr).to.include(
        `fix the invalid lines and run again with --as-of ${shown}: the edited file's newer time would bring back members who left since`,
      );
      // Given --as-of, the time is the operator's: nothing more to say.
      const given = await run([file, '--as-of', shown]);
      expect(given.code).to.equal(3);
      expect(given.stderr).not.to.include('run again with --as-of');
    });
  });

  describe('with NDJSON, join times and existing memberships', () => {
    it('reactivates older leaves, never downgrades newer states, and counts invalid lines', async () => {
      const asOf = Date.parse('2026-11-20T00:00:00Z');
      await members().insertMany([
        // Left before the snapshot: the snapshot says member again.
        {
          _id: membershipId('n-1', 'old-leave'),
          communityId: 'n-1',
          userId: 'old-leave',
          active: false,
          since: 1,
          updatedAt: asOf - 1000,
        },
        // Left after the snapshot: stays left.
        {
          _id: membershipId('n-1', 'new-leave'),
          communityId: 'n-1',
          userId: 'new-leave',
          active: false,
          since: 1,
          updatedAt: asOf + 1000,
        },
        // Already a member since earlier: keeps its since.
        {
          _id: membershipId('n-1', 'member'),
          communityId: 'n-1',
          userId: 'member',
          active: true,
          since: 5,
          updatedAt: 5,
        },
      ]);
      const file = join(dir, 'members.ndjson');
      writeFileSync(
        file,
        [
          '{"communityId":"n-1","userId":"old-leave"}',
          '{"communityId":"n-1","userId":"new-leave"}',
          '{"communityId":"n-1","userId":"member"}',
          '{"communityId":"n-1","userId":"fresh","joinedAt":"2026-01-01T00:00:00Z"}',
          '{"communityId":"n-1","userId":"fresh"}',
          '{"communityId":"n-1"}',
          'not json',
          // Longer than any event's id: no join, leave or post could ever name it.
          `{"communityId":"n-1","userId":"${'u'.repeat(129)}"}`,
          '',
        ].join('\n'),
      );
      const result = await run([file, '--as-of', '2026-11-20T00:00:00Z']);
      expect(result.code).to.equal(3);
      // Each member imported before has the list's time stored, whatever they were at it.
      expect(result.stdout).to.include('8 lines, 1 inserted, 3 updated, 1 unchanged, 3 invalid');
      const idProblem = 'expected a non-empty id of at most 128 characters without spaces';
      expect(result.stderr).to.include(`${file}:6: userId: ${idProblem}`);
      expect(result.stderr).to.include(`${file}:7: not valid JSON`);
      expect(result.stderr).to.include(`${file}:8: userId: ${idProblem}`);
      const byUser = new Map(
        (await members().find({ communityId: 'n-1' }).toArray()).map((d) => [d.userId, d]),
      );
      // A document keeps what it held (a join at since, a join or leave at updatedAt) and gains a
      // join at the list's time.
      const intervals = (userId: string) => {
        const doc = byUser.get(userId);
        return doc && membershipIntervals(importedEdges(doc));
      };
      expect(byUser.get('old-leave')).to.include({ active: false, since: 1, updatedAt: asOf - 1000 });
      expect(intervals('old-leave')).to.deep.equal([
        { from: 1, to: asOf - 1000 },
        { from: asOf, to: Infinity },
      ]);
      expect(byUser.get('new-leave')).to.include({ active: false, updatedAt: asOf + 1000 });
      expect(intervals('new-leave')).to.deep.equal([{ from: 1, to: asOf + 1000 }]);
      expect(byUser.get('member')).to.include({ active: true, since: 5 });
      expect(intervals('member')).to.deep.equal([{ from: 5, to: Infinity }]);
      for (const userId of ['old-leave', 'new-leave', 'member'])
        expect(byUser.get(userId)?.asOf, userId).to.deep.equal([asOf]);
      expect(byUser.get('fresh')).to.include({ active: true, since: Date.parse('2026-01-01T00:00:00Z') });
    });
  });

  // A join after the list was taken is a mistake in the file (epoch microseconds, local times read
  // as UTC from a zone ahead of it): stored, it reopened a membership left after the list.
  describe('with a join time after the list was taken', () => {
    it('counts the line invalid, naming the as-of time, and changes nothing', async () => {
      const asOf = Date.parse('2026-11-20T00:00:00Z');
      await members().insertOne({
        _id: membershipId('n-late', 'left'),
        communityId: 'n-late',
        userId: 'left',
        active: false,
        since: 1,
        updatedAt: asOf + 60 * 60_000,
      });
      const file = join(dir, 'late-joins.ndjson');
      writeFileSync(
        file,
        [
          '{"communityId":"n-late","userId":"left","joinedAt":"2026-11-20T03:00:00"}',
          `{"communityId":"n-late","userId":"micro","joinedAt":${asOf * 1000}}`,
          '{"communityId":"n-late","userId":"skewed","joinedAt":"2026-11-20T00:04:00Z"}',
        ].join('\n'),
      );
      const result = await run([file, '--as-of', '2026-11-20T00:00:00Z']);
      expect(result.code).to.equal(3);
      expect(result.stdout).to.include('3 lines, 1 inserted, 0 updated, 0 unchanged, 2 invalid');
      for (const line of [1, 2])
        expect(result.stderr).to.include(
          `${file}:${line}: joinedAt: after the list was taken (2026-11-20T00:00:00.000Z)`,
        );
      const left = await members().findOne({ _id: membershipId('n-late', 'left') });
      expect(left).to.include({ active: false, updatedAt: asOf + 60 * 60_000 });
      expect(await members().countDocuments({ communityId: 'n-late', userId: 'micro' })).to.equal(0);
    });
  });

  // Every line is in the summary: a member listed twice is one membership, the second line unchanged.
  const duplicatesFile = () => {
    const file = join(dir, 'duplicates.csv');
    writeFileSync(file, 'communityId,userId\nc-dup,u-1\nc-dup,u-2\nc-dup,u-1\nc-dup,\n');
    return file;
  };
  const duplicatesSummary = '4 lines, 2 inserted, 0 updated, 1 unchanged, 1 invalid';

  describe('with a member listed twice (MongoDB)', () => {
    it('counts the second line as unchanged: every line is accounted for', async () => {
      const result = await run([duplicatesFile(), '--as-of', '2026-11-20T00:00:00Z']);
      expect(result.code).to.equal(3);
      expect(result.stdout).to.include(duplicatesSummary);
    });
  });

  // The storage's own warnings (here: an index whose definition changed, re-created at open) went
  // to stdout as JSON lines among the summary an operator or a script reads there.
  describe('storage warnings at open (MongoDB)', () => {
    it('go to stderr, not among the summary on stdout', async () => {
      await run([duplicatesFile(), '--as-of', '2026-11-20T00:00:00Z']);
      const changed = (await members().indexes()).find((index) => index.name !== '_id_');
      if (changed?.name === undefined) throw new Error('no index on the memberships collection');
      await members().dropIndex(changed.name);
      await members().createIndex({ reshaped_by_the_test: 1 }, { name: changed.name });
      const result = await run([duplicatesFile(), '--as-of', '2026-11-20T00:00:00Z']);
      expect(result.stderr).to.include('index definition changed; re-creating it');
      expect(result.stdout).to.not.include('index definition changed');
      expect(result.stdout).to.include('4 lines, ');
    });
  });

  describe('with a member listed twice (PostgreSQL)', () => {
    const postgres = usePostgres();
    it('counts the second line as unchanged, as on MongoDB', async () => {
      const result = await runScript(
        'scripts/import-members.ts',
        [duplicatesFile(), '--as-of', '2026-11-20T00:00:00Z'],
        cleanEnv({ DATABASE_URL: postgres.url }),
        60_000,
      );
      expect(result.code, result.stderr).to.equal(3);
      expect(result.stdout).to.include(duplicatesSummary);
      // What was stored, not only what the summary says: the two members, once each, as of --as-of.
      const asOf = Date.parse('2026-11-20T00:00:00Z');
      const stored = await postgres.pool.query<{ user_id: string; since: string; as_of: string }>(
        "SELECT user_id, since, as_of FROM tray_imported_members WHERE community_id = 'c-dup' ORDER BY user_id",
      );
      expect(stored.rows.map((row) => [row.user_id, Number(row.since), Number(row.as_of)])).to.deep.equal([
        ['u-1', asOf, asOf],
        ['u-2', asOf, asOf],
      ]);
    });
  });

  // Ctrl-C killed it without a word: an operator could not tell whether a re-run was safe, nor
  // with which time (the file's, which an edit would move).
  describe('stopped by a signal (PostgreSQL)', () => {
    const postgres = usePostgres();
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      it(`${signal}: says the batches before are in and how to finish, and exits ${code}`, async () => {
        const file = join(dir, `stopped-${signal}.csv`);
        writeFileSync(file, 'communityId,userId\nc-sig,u-1\nc-sig,u-2\n');
        const pgEnv = cleanEnv({ DATABASE_URL: postgres.url });
        const asOf = '2026-11-20T00:00:00.000Z';
        // Once, so the tables exist to be locked.
        expect(
          (await runScript('scripts/import-members.ts', [file, '--as-of', asOf], pgEnv, 60_000)).code,
        ).to.equal(0);
        const holder = new pg.Client({ connectionString: postgres.url });
        const watcher = new pg.Client({ connectionString: postgres.url });
        await holder.connect();
        await watcher.connect();
        try {
          await holder.query('BEGIN');
          await holder.query('LOCK TABLE tray_imported_members IN ACCESS EXCLUSIVE MODE');
          const child = spawn(
            process.execPath,
            [join(repoRoot, 'scripts/import-members.ts'), file, '--as-of', asOf],
            {
              env: pgEnv,
            },
          );
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          const exited = new Promise<[number | null, NodeJS.Signals | null]>((done) =>
            child.once('exit', (exitCode, bySignal) => done([exitCode, bySignal])),
          );
          await untilWaitingForLock(watcher, 'import-members', () => stderr);
          child.kill(signal);
          expect(await exited).to.deep.equal([code, null]);
          expect(stderr).to.include(
            `stopped with 0 lines imported: run the same import again with --as-of ${asOf} to finish (lines already in count as unchanged)`,
          );
        } finally {
          await holder.query('ROLLBACK');
          await holder.end();
          await watcher.end();
        }
      });
    }
  });

  describe('with times as an operator writes them', () => {
    it('reads a time without an offset as UTC on any machine, and refuses a day that does not exist', async () => {
      const file = join(dir, 'times.ndjson');
      writeFileSync(
        file,
        [
          '{"communityId":"t-1","userId":"local","joinedAt":"2026-11-20T00:00:00"}',
          '{"communityId":"t-1","userId":"rolled","joinedAt":"2026-02-30"}',
          // Epoch seconds, as many databases export them: read as milliseconds, January 1970.
          '{"communityId":"t-1","userId":"seconds","joinedAt":1763596800}',
          '{"communityId":"t-1","userId":"seconds-text","joinedAt":"1763596800"}',
          '',
        ].join('\n'),
      );
      const result = await runScript(
        'scripts/import-members.ts',
        [file, '--as-of', '2026-11-21T00:00:00'],
        { ...env, TZ: 'America/New_York' },
        170_000,
      );
      expect(result.code).to.equal(3);
      expect(result.stderr).to.include(
        `${file}:2: joinedAt: expected an ISO 8601 time or epoch milliseconds`,
      );
      for (const line of [3, 4]) {
        expect(result.stderr).to.include(
          `${file}:${line}: joinedAt: epoch milliseconds before 2000 (epoch seconds? multiply by 1000)`,
        );
      }
      expect(await members().countDocuments({ userId: { $in: ['seconds', 'seconds-text'] } })).to.equal(0);
      const local = await members().findOne({ _id: membershipId('t-1', 'local') });
      expect(local).to.include({ since: Date.parse('2026-11-20T00:00:00Z') });
      expect(local).to.include({ updatedAt: Date.parse('2026-11-21T00:00:00Z') });
    });
  });

  // Windows editors and spreadsheet exports start a UTF-8 file with a byte-order mark.
  describe('with files that start with a byte-order mark', () => {
    it('reads the first line of a CSV and of an NDJSON file', async () => {
      const csv = join(dir, 'bom.csv');
      writeFileSync(csv, '\uFEFFcommunityId,userId\nbom-csv,u-1\n');
      const ndjson = join(dir, 'bom.ndjson');
      writeFileSync(ndjson, '\uFEFF{"communityId":"bom-ndjson","userId":"u-1"}\n');
      for (const file of [csv, ndjson]) {
        const result = await run([file, '--as-of', '2026-11-20T00:00:00Z']);
        expect(withoutProgress(result.stderr)).to.equal('');
        expect(result.code).to.equal(0);
        expect(result.stdout).to.include('1 lines, 1 inserted, 0 updated, 0 unchanged, 0 invalid');
      }
      expect(await members().countDocuments({ communityId: { $in: ['bom-csv', 'bom-ndjson'] } })).to.equal(2);
    });
  });

  // A file that is one line (mongoexport --jsonArray, jq -s) was read whole into memory first: out
  // of memory, or past V8's longest string a stack trace, where a clear line was due.
  describe('with lines longer than any member list has', () => {
    it('refuses a file that is one long line with one clear line, and counts a long line inside a file invalid', async () => {
      const array = join(dir, 'array.json');
      const member = (n: number) => `{"communityId":"long-lines","userId":"u-${n}"}`;
      writeFileSync(array, `[${Array.from({ length: 3_000 }, (_, n) => member(n)).join(',')}]`);
      const refused = await run([array, '--format', 'ndjson', '--as-of', '2026-11-20T00:00:00Z']);
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.match(
        /^.*array\.json: line 1: a line of \d+ characters \(at most 65536\): one member per line, not a JSON array\n$/,
      );
      const mixed = join(dir, 'mixed.ndjson');
      writeFileSync(mixed, [member(1), `{"pad":"${'x'.repeat(70_000)}"}`, member(2), ''].join('\n'));
      const result = await run([mixed, '--as-of', '2026-11-20T00:00:00Z']);
      expect(result.code).to.equal(3);
      expect(result.stdout).to.include('3 lines, 2 inserted, 0 updated, 0 unchanged, 1 invalid');
      expect(result.stderr).to.include(`${mixed}:2: a line of 70010 characters (at most 65536)`);
      expect(await members().countDocuments({ communityId: 'long-lines' })).to.equal(2);
    });
  });

  describe('with bad arguments', () => {
    it('--help prints the usage and exits 0', async () => {
      const result = await run(['--help']);
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include('Usage: npm run import-members');
    });
    it('a missing file exits 2 with one clear line', async () => {
      const result = await run([join(dir, 'nope.csv')]);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.equal(`cannot read ${join(dir, 'nope.csv')}: no such file\n`);
    });
    it('a path through a file exits 2 saying so, not that the file is missing', async () => {
      const file = join(dir, 'a-file.csv');
      writeFileSync(file, 'communityId,userId\n');
      const result = await run([join(file, 'members.csv')]);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.equal(
        `cannot read ${join(file, 'members.csv')}: a part of the path is a file, not a folder\n`,
      );
    });
    it('an --as-of that is not an ISO 8601 time of a real day exits 2', async () => {
      const file = join(dir, 'as-of.csv');
      writeFileSync(file, 'communityId,userId\nc-1,u-1\n');
      for (const asOf of ['1', 'March 7', '2026-02-30', '2026-11-20T25:00:00Z']) {
        const result = await run([file, '--as-of', asOf]);
        expect(result.code, asOf).to.equal(2);
        expect(result.stderr, asOf).to.include('--as-of: expected an ISO 8601 time');
      }
    });
    // A list from the future holds its members back until then, and no later import could undo
    // it: each would read as older than the stored state.
    it('an --as-of in the future, or a file whose time is, exits 2 naming it, and imports nothing', async () => {
      const file = join(dir, 'future.csv');
      writeFileSync(file, 'communityId,userId\nc-future,u-1\n');
      const given = await run([file, '--as-of', '2062-11-20']);
      expect(given.code).to.equal(2);
      expect(given.stderr).to.include('--as-of: 2062-11-20T00:00:00.000Z is in the future');
      const later = new Date(Date.now() + 3_600_000);
      utimesSync(file, later, later);
      const fromFile = await run([file]);
      expect(fromFile.code).to.equal(2);
      expect(fromFile.stderr).to.include(`the file's time (${later.toISOString().slice(0, 19)}`);
      expect(await members().countDocuments({ communityId: 'c-future' })).to.equal(0);
    });
    it('a --batch-size over 10,000 exits 2 (one batch is one transaction, held in memory)', async () => {
      const file = join(dir, 'batch.csv');
      writeFileSync(file, 'communityId,userId\nc-1,u-1\n');
      const result = await run([file, '--batch-size', '100000000']);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('--batch-size: expected a whole number from 1 to 10000');
    });
    // An events export has communityId and userId on every line: taken for a member list, every
    // actor of it became a member again, leavers and banned users too.
    // (A first line of that kind refuses the file before the storage is opened: below.)
    it('refuses NDJSON lines with keys other than communityId, userId and joinedAt', async () => {
      const file = join(dir, 'events.ndjson');
      writeFileSync(
        file,
        `${JSON.stringify({ communityId: 'c-other', userId: 'u-0' })}\n` +
          `${JSON.stringify({ key: 'k1', event: 'post.didCreate', communityId: 'c-events', userId: 'u-1' })}\n`,
      );
      const result = await run([file, '--as-of', '2026-11-20']);
      expect(result.code).to.equal(3);
      expect(result.stderr).to.include(
        'unexpected keys key, event (a member line holds communityId, userId and joinedAt)',
      );
      expect(await members().countDocuments({ communityId: 'c-events' })).to.equal(0);
    });
    it('an unknown format exits 2', async () => {
      const file = join(dir, 'members.txt');
      writeFileSync(file, 'x');
      const result = await run([file]);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('--format: expected csv or ndjson (cannot tell from the file name)');
      const given = await run([file, '--format', 'json']);
      expect([given.code, given.stderr.trim()]).to.deep.equal([
        2,
        '--format: expected csv or ndjson, not json',
      ]);
    });
    // Checked before the storage is opened (which would bring its schema up to date for nothing).
    it('a CSV without the required header, or a folder, exits 2 naming the problem, and opens no storage', async () => {
      const file = join(dir, 'bad-header.csv');
      writeFileSync(file, 'community,user\nc,u\n');
      const unreachable = cleanEnv({ MONGODB_URI: 'mongodb://127.0.0.1:9/none', MONGODB_DB: mongo.dbName });
      const result = await runScript('scripts/import-members.ts', [file], unreachable, 60_000);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include(`${file}: the CSV header must name communityId and userId`);
      const folder = await runScript(
        'scripts/import-members.ts',
        [dir, '--format', 'csv'],
        unreachable,
        60_000,
      );
      expect(folder.code).to.equal(2);
      expect(folder.stderr).to.include(`cannot read ${dir}: not a file`);
    });

    // A spreadsheet's `joined_at` column was not read: every member was imported as joined at the
    // as-of time, and an import with the right header could not correct it (an active member
    // keeps the join time the tray has).
    it('a CSV header spelling a column otherwise (joined_at, JoinedAt, Joined At) exits 2 naming it, and opens no storage', async () => {
      const unreachable = cleanEnv({ MONGODB_URI: 'mongodb://127.0.0.1:9/none', MONGODB_DB: mongo.dbName });
      const cases: [string, string][] = [
        ['communityId,userId,joined_at', 'joined_at: expected joinedAt'],
        ['communityId,userId,JoinedAt', 'JoinedAt: expected joinedAt'],
        ['communityId,userId,Joined At', 'Joined At: expected joinedAt'],
        ['community_id,user-id,joinedAt', 'community_id: expected communityId, user-id: expected userId'],
      ];
      for (const [header, named] of cases) {
        const file = join(dir, 'misspelt-header.csv');
        writeFileSync(file, `${header}\nc-misspelt,u-1,2025-01-01T00:00:00Z\n`);
        const result = await runScript('scripts/import-members.ts', [file], unreachable, 60_000);
        expect([result.code, result.stderr.trim()]).to.deep.equal([
          2,
          `${file}: the CSV header misspells columns (${named}): only the exact names are read; rename them`,
        ]);
      }
    });

    // An events export is NDJSON with communityId and userId too: it opened the storage (and
    // brought its schema up to date) before every line of it was refused.
    it('an NDJSON file of another kind (an events export) exits 2 naming the problem, and opens no storage', async () => {
      const file = join(dir, 'events.ndjson');
      writeFileSync(
        file,
        `\n${JSON.stringify({ key: 'k-1', event: 'post.didCreate', communityId: 'c', userId: 'u' })}\n`,
      );
      const unreachable = cleanEnv({ MONGODB_URI: 'mongodb://127.0.0.1:9/none', MONGODB_DB: mongo.dbName });
      const result = await runScript('scripts/import-members.ts', [file], unreachable, 60_000);
      expect([result.code, result.stderr.trim()]).to.deep.equal([
        2,
        `${file}: line 2: unexpected keys key, event (a member line holds communityId, userId and joinedAt)`,
      ]);
    });

    // npm runs a script at the package's root; the folder the command was typed in is INIT_CWD.
    // A relative path was read from the root: `cd data && npm run import-members -- members.csv`
    // said the file did not exist.
    it('reads a relative path from the folder `npm run` was typed in', async () => {
      const file = join(dir, 'bad-header.csv');
      writeFileSync(file, 'community,user\nc,u\n');
      const typedIn = cleanEnv({
        MONGODB_URI: 'mongodb://127.0.0.1:9/none',
        MONGODB_DB: mongo.dbName,
        INIT_CWD: dir,
        npm_lifecycle_event: 'import-members',
      });
      const result = await runScript('scripts/import-members.ts', ['bad-header.csv'], typedIn, 60_000);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include(`${file}: the CSV header must name communityId and userId`);
    });
  });
});
