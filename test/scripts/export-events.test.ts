import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { untilWaitingForLock } from '../support/until-waiting-for-lock.ts';
import { cleanEnv, repoRoot, runCommand, runScript } from '../support/run-script.ts';
import { useTrayStorage } from '../support/use-tray-storage.ts';
import { eventsFilterShape } from '../../tray-service/admin/api-schema/admin-inputs.ts';
import { toDecisionDoc } from '../../tray-service/domain/decision-doc.ts';
import { eventDoc, storeEvents, type SeedEvent } from '../tray-service/admin/admin-fixtures.ts';
import { connectMongo } from '../../shared/mongo/connect-mongo.ts';
import { TRAY_MIGRATIONS } from '../../tray-service/storage/mongodb/collections/collection-names.ts';
import { PROCESSED_AT } from '../../tray-service/storage/mongodb/memberships/migrate-processed-at.ts';

describe('scripts/export-events.ts', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  let dir: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'export-events-'));
    env = cleanEnv({ ...suite.env, EVENTS_RETENTION_DAYS: '3650' });
    const docs: SeedEvent[] = [];
    for (let n = 0; n < 1200; n += 1) {
      docs.push(
        eventDoc({
          key: `x-${String(n).padStart(5, '0')}`,
          event: n % 3 === 0 ? 'comment.didCreate' : 'post.didCreate',
          receivedAt: new Date(Date.UTC(2026, 10, 20) + n * 60_000),
        }),
      );
    }
    await storeEvents(suite.storage, docs);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const readLines = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { key: string; event: string; receivedAt: string });

  it('writes every stored event as NDJSON, newest first, and prints a summary', async () => {
    const out = join(dir, 'all.ndjson');
    const result = await runScript('scripts/export-events.ts', ['--out', out], env);
    expect(result.code).to.equal(0);
    expect(result.stdout).to.match(new RegExp(`^exported 1200 events to ${out} in \\d+\\.\\d s\\n$`));
    const lines = readLines(out);
    expect(lines).to.have.lengthOf(1200);
    expect(lines[0]).to.include({
      key: 'x-01199',
      event: 'post.didCreate',
      receivedAt: '2026-11-20T19:59:00.000Z',
    });
    expect(lines.at(-1)?.key).to.equal('x-00000');
    expect(existsSync(`${out}.partial`)).to.equal(false);
  });

  // The progress bar's total was a count of every match, under the statement timeout: on tens of
  // millions of stored events it was cancelled (10 s by default) and the export failed before its
  // first line. It counts up to a bound now, and past it shows how many so far without a total.
  it('counts the matches for its progress up to --count-up-to, and past it exports without a total', async () => {
    const out = join(dir, 'bounded-count.ndjson');
    const result = await runScript(
      'scripts/export-events.ts',
      ['--out', out, '--event', 'comment.didCreate', '--count-up-to', '100'],
      env,
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(readLines(out)).to.have.lengthOf(400);
    const progress = result.stderr.split('\n').filter((line) => line !== '');
    expect(progress.length).to.be.above(0);
    for (const line of progress) expect(line).to.match(/^exporting: \d+ events$/);
    expect(progress.at(-1)).to.equal('exporting: 400 events');
    // Within the bound, the total is known.
    const whole = await runScript(
      'scripts/export-events.ts',
      ['--out', join(dir, 'counted.ndjson'), '--event', 'comment.didCreate', '--count-up-to', '400'],
      env,
    );
    expect(
      whole.stderr
        .split('\n')
        .filter((line) => line !== '')
        .at(-1),
    ).to.match(/^exporting: 100% \| 400\/400 events/);
    const refused = await runScript('scripts/export-events.ts', ['--out', out, '--count-up-to', '0'], env);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include('--count-up-to: expected a whole number from 1 to');
  });

  it('writes a file only its owner can read (raw payloads), also over an existing one with --force', async () => {
    const out = join(dir, 'private.ndjson');
    writeFileSync(out, 'old\n', { mode: 0o644 });
    writeFileSync(`${out}.partial`, 'left by an interrupted run\n', { mode: 0o644 });
    const result = await runScript('scripts/export-events.ts', ['--out', out, '--force'], env);
    expect(result.code).to.equal(0);
    expect((statSync(out).mode & 0o777).toString(8)).to.equal('600');
  });

  // Two exports to one name (another user's, another day's) replaced the first without a word.
  it('refuses an --out that exists without --force, naming it, and leaves it as it was', async () => {
    const out = join(dir, 'kept.ndjson');
    writeFileSync(out, 'an earlier export\n');
    const result = await runScript('scripts/export-events.ts', ['--out', out], env);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include(
      `--out: ${out} exists; name another file, or give --force to replace it`,
    );
    expect(readFileSync(out, 'utf8')).to.equal('an earlier export\n');
    expect(existsSync(`${out}.partial`)).to.equal(false);
  });

  describe('--resume', () => {
    // A run stopped at its very end: its output path is a directory that is not empty, so the
    // finished partial file cannot take its place. Its partial file is then cut to what an
    // interrupted run leaves: `keep` complete lines and part of the next.
    const interrupted = async (name: string, filters: string[], keep: number) => {
      const out = join(dir, name);
      // A folder at --out is refused before the export starts; one made while it runs (as soon as
      // its partial file appears) stops it at the rename, with everything written kept.
      const watcher = watch(dir, (_change, file) => {
        if (file === `${name}.partial` && !existsSync(out))
          mkdirSync(join(out, 'in-the-way'), { recursive: true });
      });
      const stopped = await runScript('scripts/export-events.ts', ['--out', out, ...filters], env).finally(
        () => watcher.close(),
      );
      expect(stopped.code, stopped.stderr).to.equal(1);
      expect(stopped.stderr).to.include(
        `${out}.partial keeps them: run the same command with --resume to go on`,
      );
      // Named, so the --resume it advises can finish: the raw EISDIR of the rename said nothing.
      expect(stopped.stderr).to.include(`error: --out: ${out} is a folder; move it away first`);
      rmSync(out, { recursive: true });
      const lines = readFileSync(`${out}.partial`, 'utf8').split('\n');
      expect(lines.length, 'lines written').to.be.above(keep + 1);
      writeFileSync(`${out}.partial`, `${lines.slice(0, keep).join('\n')}\n${lines[keep]?.slice(0, 40)}`);
      return out;
    };

    it('goes on after the last complete line: the file is the whole export, every event once', async () => {
      const whole = join(dir, 'whole.ndjson');
      expect((await runScript('scripts/export-events.ts', ['--out', whole], env)).code).to.equal(0);
      const out = await interrupted('resumed.ndjson', [], 500);
      const result = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(new RegExp(`^exported 700 events more to ${out} in \\d+\\.\\d s\\n$`));
      expect(readFileSync(out, 'utf8')).to.equal(readFileSync(whole, 'utf8'));
      expect((statSync(out).mode & 0o777).toString(8)).to.equal('600');
      expect(readdirSync(dir).filter((name) => name.startsWith('resumed.ndjson.'))).to.deep.equal([]);
    });

    it('refuses a second run on the same file while one runs, and takes over the lock of one that was killed', async () => {
      const out = await interrupted('locked.ndjson', [], 500);
      const lock = `${out}.partial.lock`;
      // A process whose command line names export-events stands for a run still going.
      const running = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', 'export-events']);
      try {
        writeFileSync(lock, `${running.pid}\n`);
        const refused = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
        expect(refused.code).to.equal(2);
        expect(refused.stderr).to.include(`another run (process ${running.pid}) is writing ${out}.partial`);
        expect(readFileSync(`${out}.partial`, 'utf8').split('\n')).to.have.lengthOf(501);
      } finally {
        running.kill('SIGKILL');
      }
      // A run killed: its process is gone.
      const gone = spawnSync('true').pid;
      writeFileSync(lock, `${gone}\n`);
      const resumed = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
      expect(resumed.code, resumed.stderr).to.equal(0);
      expect(readLines(out)).to.have.lengthOf(1200);
      expect(existsSync(lock)).to.equal(false);
    });

    // After a reboot, a killed run's pid may be another Node program's (the tray service): that is
    // no run, and the lock is taken over instead of telling the operator to stop that program.
    it('takes over a lock whose pid is now another Node program', async () => {
      const out = await interrupted('reused-pid.ndjson', [], 500);
      const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
      try {
        writeFileSync(`${out}.partial.lock`, `${other.pid}\n`);
        const resumed = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
        expect(resumed.code, resumed.stderr).to.equal(0);
        expect(readLines(out)).to.have.lengthOf(1200);
      } finally {
        other.kill('SIGKILL');
      }
    });

    // The filters alone let a resume in a shell pointed at another deployment append that one's
    // events: a file that read as one export of one database.
    it('refuses to go on with an export started on another database, and leaves it as it was', async () => {
      const out = await interrupted('other-database.ndjson', [], 500);
      const before = readFileSync(`${out}.partial`, 'utf8');
      const other =
        env.DATABASE_URL !== undefined
          ? { DATABASE_URL: env.DATABASE_URL.replace(/\/[^/?]*(\?|$)/, '/another_deployment$1') }
          : { MONGODB_DB: 'another_deployment' };
      const refused = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], {
        ...env,
        ...other,
      });
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.match(
        /--resume: .* was started on (postgres|mongodb) .*, and this run reads .*another_deployment/,
      );
      expect(refused.stderr).to.not.match(/:[^:@/]*@/);
      expect(readFileSync(`${out}.partial`, 'utf8')).to.equal(before);
      const resumed = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
      expect(resumed.code, resumed.stderr).to.equal(0);
      expect(readLines(out)).to.have.lengthOf(1200);
    });

    // The storage is opened before any file is touched: a run that cannot reach it changes nothing.
    it('leaves an interrupted export as it was when a fresh run cannot open the storage', async () => {
      const out = await interrupted('kept-on-bad-config.ndjson', [], 500);
      const before = readFileSync(`${out}.partial`, 'utf8');
      const filters = readFileSync(`${out}.partial.filters.json`, 'utf8');
      const failed = await runScript(
        'scripts/export-events.ts',
        ['--out', out, '--event', 'comment.didCreate'],
        cleanEnv({ EVENTS_RETENTION_DAYS: '3650' }),
      );
      expect(failed.code).to.equal(2);
      expect(readFileSync(`${out}.partial`, 'utf8')).to.equal(before);
      expect(readFileSync(`${out}.partial.filters.json`, 'utf8')).to.equal(filters);
      const resumed = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
      expect(resumed.code, resumed.stderr).to.equal(0);
      expect(readLines(out)).to.have.lengthOf(1200);
    });

    it('refuses a partial file whose last line is not an exported event, naming it, and leaves it', async () => {
      const out = await interrupted('damaged.ndjson', [], 500);
      const partial = `${out}.partial`;
      const kept = readFileSync(partial, 'utf8').split('\n').slice(0, -2);
      // A damaged last line, then a torn one after it: neither is cut off from a file refused.
      writeFileSync(partial, `${[...kept, '{"key": "x-1", "receivedAt": 12'].join('\n')}\n{"key": "x-`);
      const before = readFileSync(partial, 'utf8');
      const refused = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
      expect(refused.code, refused.stderr).to.equal(2);
      expect(refused.stderr.trim()).to.equal(
        `--resume: the last line of ${partial} is not an exported event (a key and a receivedAt time); move the file away to keep it, then run without --resume`,
      );
      expect(readFileSync(partial, 'utf8')).to.equal(before);
    });

    it('refuses a partial file whose filters are not known, without removing it', async () => {
      const out = await interrupted('no-filters.ndjson', [], 500);
      rmSync(`${out}.partial.filters.json`);
      const refused = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.include(
        'so the filters it was started with are not known; move it away to keep it',
      );
      expect(existsSync(`${out}.partial`)).to.equal(true);
    });

    it('refuses other filters than the interrupted run had, and a file with nothing to go on with', async () => {
      const out = await interrupted('resumed-comments.ndjson', ['--event', 'comment.didCreate'], 150);
      const other = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], env);
      expect(other.code).to.equal(2);
      expect(other.stderr).to.include(`--resume: ${out}.partial was started with other filters`);
      const none = await runScript(
        'scripts/export-events.ts',
        ['--out', join(dir, 'never.ndjson'), '--resume'],
        env,
      );
      expect(none.code).to.equal(2);
      expect(none.stderr).to.include(`--resume: no ${join(dir, 'never.ndjson')}.partial to go on with`);
      const same = await runScript(
        'scripts/export-events.ts',
        ['--out', out, '--resume', '--event', 'comment.didCreate'],
        env,
      );
      expect(same.code, same.stderr).to.equal(0);
      expect(readLines(out).map((line) => line.key)).to.have.lengthOf(400);
      expect(new Set(readLines(out).map((line) => line.key)).size).to.equal(400);
    });
  });

  it('applies the filters', async () => {
    const out = join(dir, 'comments.ndjson');
    const result = await runScript(
      'scripts/export-events.ts',
      [
        '--out',
        out,
        '--event',
        'comment.didCreate',
        '--since',
        '2026-11-20T00:00:00Z',
        '--until',
        '2026-11-20T01:00:00Z',
      ],
      env,
    );
    expect(result.code).to.equal(0);
    // Minutes 0..59, every third one is a comment.
    expect(readLines(out).map((line) => line.key)).to.have.lengthOf(20);
    expect(readLines(out).every((line) => line.event === 'comment.didCreate')).to.equal(true);
  });

  describe('the filters of the admin API, which refuses a large export with "use npm run export-events"', () => {
    const at = (day: number) => new Date(Date.UTC(2026, 11, day));
    before(async () => {
      // Stored as the worker stores them: the acting user and the community with the outcome.
      const subjects = [
        { key: 'who-1', userId: 'u-ana', communityId: 'c-hike', receivedAt: at(3) },
        { key: 'who-2', userId: 'u-ben', communityId: 'c-hike', receivedAt: at(2), webhook: 'backup' },
        { key: 'who-3', userId: 'u-ana', communityId: 'c-run', receivedAt: at(1) },
      ];
      for (const { userId, communityId, ...fields } of subjects) {
        const { storedAt, status, ...event } = eventDoc({ event: 'comment.didCreate', ...fields });
        await suite.storage.events.store(
          event,
          { status, userId, communityId },
          { retentionDays: 3650, now: storedAt },
        );
      }
      const flagged = await suite.storage.events.get('who-3');
      await suite.storage.decisions.saveAll([
        toDecisionDoc(
          flagged!,
          'blocked-words',
          { action: 'flag', reason: 'blocklisted words: "spam"', subject: { type: 'comment', id: 'cm-3' } },
          { now: at(4), delivery: 'off' },
        ),
      ]);
    });

    const exported = async (name: string, filters: string[]) => {
      const out = join(dir, `${name}.ndjson`);
      const result = await runScript('scripts/export-events.ts', ['--out', out, ...filters], env);
      expect(result.code, result.stderr).to.equal(0);
      return readLines(out).map((line) => line.key);
    };

    it('--userId, --communityId and --moderation select as the API’s filters do', async () => {
      expect(await exported('ana', ['--userId', 'u-ana'])).to.deep.equal(['who-1', 'who-3']);
      expect(await exported('hike', ['--communityId', 'c-hike'])).to.deep.equal(['who-1', 'who-2']);
      expect(await exported('flagged', ['--moderation', 'flag'])).to.deep.equal(['who-3']);
      expect(await exported('ana-unmoderated', ['--userId', 'u-ana', '--moderation', 'none'])).to.deep.equal([
        'who-1',
      ]);
    });

    it('takes every filter the API takes, each selecting as the API does', async () => {
      const december = ['--since', at(1).toISOString()];
      // Typed by the API's filters: a filter added there and not here fails to compile.
      const cases: Record<keyof typeof eventsFilterShape, [string[], string[]]> = {
        event: [
          ['--event', 'comment.didCreate', ...december],
          ['who-1', 'who-2', 'who-3'],
        ],
        webhook: [['--webhook', 'backup'], ['who-2']],
        status: [
          ['--status', 'stored', ...december],
          ['who-1', 'who-2', 'who-3'],
        ],
        userId: [['--userId', 'u-ben'], ['who-2']],
        communityId: [['--communityId', 'c-run'], ['who-3']],
        moderation: [['--moderation', 'flag'], ['who-3']],
        since: [
          ['--since', at(2).toISOString()],
          ['who-1', 'who-2'],
        ],
        until: [['--until', at(2).toISOString(), ...december], ['who-3']],
      };
      for (const [name, [filters, keys]] of Object.entries(cases))
        expect(await exported(`every-${name}`, filters), name).to.deep.equal(keys);
      const { stdout } = await runScript('scripts/export-events.ts', ['--help'], env);
      for (const name of Object.keys(eventsFilterShape)) expect(stdout, name).to.include(`--${name} `);
    });
  });

  // Ctrl-C or SIGTERM mid-export. The export is held still by a lock on the events table, so the
  // signal surely comes while it runs: PostgreSQL only, as the signal's handling is the script's own.
  describe('stopped by a signal', () => {
    const pgSuite = useTrayStorage('postgres');
    let pgEnv: NodeJS.ProcessEnv;
    before(async () => {
      pgEnv = cleanEnv({ ...pgSuite.env, EVENTS_RETENTION_DAYS: '3650' });
      await storeEvents(
        pgSuite.storage,
        [0, 1, 2].map((n) => eventDoc({ key: `s-${n}`, receivedAt: new Date(Date.UTC(2026, 10, 20, n)) })),
      );
    });

    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      it(`${signal}: says how to go on, keeps the partial file, frees the lock and exits ${code}`, async () => {
        const out = join(dir, `stopped-by-${signal}.ndjson`);
        const holder = new pg.Client({ connectionString: pgSuite.env.DATABASE_URL });
        const watcher = new pg.Client({ connectionString: pgSuite.env.DATABASE_URL });
        await holder.connect();
        await watcher.connect();
        try {
          await holder.query('BEGIN');
          await holder.query('LOCK TABLE stored_events IN ACCESS EXCLUSIVE MODE');
          const child = spawn(process.execPath, [join(repoRoot, 'scripts/export-events.ts'), '--out', out], {
            env: pgEnv,
          });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          const exited = new Promise<[number | null, NodeJS.Signals | null]>((done) =>
            child.once('exit', (exitCode, bySignal) => done([exitCode, bySignal])),
          );
          // Waiting for the lock: the export has begun (its partial file made) and cannot end.
          await untilWaitingForLock(watcher, 'export-events', () => stderr);
          child.kill(signal);
          expect(await exited).to.deep.equal([code, null]);
          expect(stderr).to.include(
            `stopped after 0 events; ${out}.partial keeps them: run the same command with --resume to go on`,
          );
          expect(existsSync(`${out}.partial`)).to.equal(true);
          expect(existsSync(`${out}.partial.lock`)).to.equal(false);
        } finally {
          await holder.query('ROLLBACK');
          await holder.end();
          await watcher.end();
        }
        const resumed = await runScript('scripts/export-events.ts', ['--out', out, '--resume'], pgEnv);
        expect(resumed.code, resumed.stderr).to.equal(0);
        expect(readLines(out).map((line) => line.key)).to.deep.equal(['s-2', 's-1', 's-0']);
      });
    }
  });

  describe('with bad arguments', () => {
    const cases: [string[], string][] = [
      [[], '--out: the output file is required'],
      [['--out', 'x', '--since', 'today'], '--since: expected an ISO 8601 time'],
      [['--out', 'x', '--until', '2026-02-30'], '--until: expected an ISO 8601 time'],
      [['--out', 'x', '--status', 'gone'], '--status: expected applied, stored, unknown, invalid or foreign'],
      [['--out', 'x', '--moderation', 'maybe'], '--moderation: expected none, any, flag, ban-request'],
      [['--out', 'x', '--userId', ''], '--userId: expected a value, got an empty one'],
      [['--out', 'x', '--since', '2026-11-21', '--until', '2026-11-20'], '--until: must be later than since'],
      [['--out', 'x', '--bogus'], "Unknown option '--bogus'"],
      // Not the last one silently: the admin API refuses ?status=applied&status=invalid too.
      [['--out', 'x', '--status', 'applied', '--status', 'invalid'], '--status: given twice'],
      [['--out', '/nonexistent-folder/x.ndjson'], '--out: the folder /nonexistent-folder does not exist'],
      [['--out', '/etc/hostname/x.ndjson'], '--out: /etc/hostname is not a folder'],
    ];
    for (const [args, message] of cases) {
      it(`${args.join(' ') || '(none)'} exits 2: ${message}`, async () => {
        const result = await runScript('scripts/export-events.ts', args, env);
        expect(result.code).to.equal(2);
        expect(result.stderr).to.include(message);
      });
    }
    // Found only at the rename, the whole export ran first, and its partial file was inside the
    // folder the message said to move away.
    it('--out naming an existing folder (with or without a slash) exits 2 before exporting anything', async () => {
      const folder = join(dir, 'a-folder');
      mkdirSync(folder);
      for (const out of [folder, `${folder}/`]) {
        const result = await runScript('scripts/export-events.ts', ['--out', out], env);
        expect([result.code, result.stderr.trim()], out).to.deep.equal([
          2,
          `--out: ${folder} is a folder; name the file to write (such as ${join(folder, 'events.ndjson')})`,
        ]);
      }
      expect(readdirSync(folder)).to.deep.equal([]);
      expect(existsSync(`${folder}.partial`)).to.equal(false);
    });
    // npm takes an option typed before `--` as its own setting, in lowercase (npm_config_userid):
    // the check looked for npm_config_userId, found nothing, and every user's events were exported.
    it('refuses a camelCase filter npm took for itself (typed before `--`), and writes nothing', async () => {
      const out = join(dir, 'npm-took.ndjson');
      const result = await runCommand(
        'npm',
        ['run', '-s', 'export-events', '--userId=u-nobody', '--', '--out', out],
        env,
      );
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('npm took --userId');
      expect(existsSync(out) || existsSync(`${out}.partial`)).to.equal(false);
    });
    it('--help prints the usage', async () => {
      const result = await runScript('scripts/export-events.ts', ['--help'], env);
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include('Usage: npm run export-events');
    });
  });
});

/** export-events writing `out` with the storage variables `env` (events of any age exported). */
const exportTo = (out: string, env: Record<string, string | undefined>) =>
  runScript('scripts/export-events.ts', ['--out', out], cleanEnv({ ...env, EVENTS_RETENTION_DAYS: '3650' }));

// Analytics and moderation teams export with a role that may only read, or from a replica: the
// export opened the storage as the service does, migrations and all, and failed there (permission
// denied for the schema), or would have changed the schema under the running service.
describe('scripts/export-events.ts with a read-only database (PostgreSQL)', function () {
  this.timeout(60_000);
  const suite = useTrayStorage('postgres');
  const role = `reader_${process.pid}`;
  let admin: pg.Client | undefined;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'export-read-only-'));
    await storeEvents(suite.storage, [eventDoc({ key: 'ro-1', event: 'post.didCreate' })]);
    admin = new pg.Client({ connectionString: suite.env.DATABASE_URL });
    // The suite's database is dropped in an after hook that may run before this suite's.
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
    await admin.query(`ALTER ROLE ${role} SET default_transaction_read_only = on`);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await admin?.query(`DROP OWNED BY ${role}`).catch(() => undefined);
    await admin?.query(`DROP ROLE ${role}`).catch(() => undefined);
    await admin?.end().catch(() => undefined);
  });
  const readerEnv = () => {
    const url = new URL(suite.env.DATABASE_URL!);
    url.username = role;
    url.password = '';
    return { ...suite.env, DATABASE_URL: url.toString() };
  };

  it('exports with a role that may only read', async () => {
    const out = join(dir, 'reader.ndjson');
    const result = await exportTo(out, readerEnv());
    // Only its progress lines (stderr is not a terminal here): no warning, no error.
    expect(result.stderr).to.match(/^(exporting: .*\n)+$/);
    expect(result.code).to.equal(0);
    expect(readFileSync(out, 'utf8')).to.include('"key":"ro-1"');
  });

  it('refuses a schema an older version left, naming both, and leaves it as it was', async () => {
    const { rows } = await admin!.query<{ version: number; name: string }>(
      'SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1',
    );
    const latest = rows[0]!;
    await admin!.query('DELETE FROM schema_migrations WHERE version = $1', [latest.version]);
    try {
      const result = await exportTo(join(dir, 'behind.ndjson'), suite.env);
      expect(result.code).to.equal(1);
      expect(result.stderr).to.include(
        `the database's tray schema is at migration ${latest.version - 1}, this version needs migration ${latest.version}`,
      );
      const after = await admin!.query('SELECT 1 FROM schema_migrations WHERE version = $1', [
        latest.version,
      ]);
      expect(after.rowCount).to.equal(0);
    } finally {
      await admin!.query(
        'INSERT INTO schema_migrations (version, name) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [latest.version, latest.name],
      );
    }
  });
});

describe('scripts/export-events.ts with a read-only database (MongoDB)', function () {
  this.timeout(60_000);
  const suite = useTrayStorage('mongodb');

  it('refuses a database an older version left, naming what it lacks, and leaves it as it was', async () => {
    const { client, db } = await connectMongo(suite.env.MONGODB_URI!, suite.env.MONGODB_DB!, {
      appName: 'tests',
    });
    try {
      const migrations = db.collection<{ _id: string; at: Date }>(TRAY_MIGRATIONS);
      expect(await migrations.findOne({ _id: PROCESSED_AT })).to.not.equal(null);
      await migrations.deleteOne({ _id: PROCESSED_AT });
      const dir = mkdtempSync(join(tmpdir(), 'export-read-only-'));
      try {
        const result = await exportTo(join(dir, 'behind.ndjson'), suite.env);
        expect(result.code).to.equal(1);
        expect(result.stderr).to.include(
          `the database's tray schema is without the upgrades ${PROCESSED_AT}, this version needs them`,
        );
        expect(await migrations.findOne({ _id: PROCESSED_AT })).to.equal(null);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      await client.close();
    }
  });
});
