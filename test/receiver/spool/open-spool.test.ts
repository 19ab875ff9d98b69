import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { DEAD_CHECKS } from '../../../receiver/spool/adopt-orphaned-segments.ts';
import { openSpool } from '../../../receiver/spool/open-spool.ts';
import { segmentName } from '../../../receiver/spool/segment-files.ts';
import { SpoolClosedError } from '../../../receiver/spool/spool-closed-error.ts';
import { SpoolDirError } from '../../../receiver/spool/spool-dir-error.ts';
import { SpoolFullError } from '../../../receiver/spool/spool-full-error.ts';
import { encodeWebhookJob, type EncodedWebhookJob } from '../../../shared/queue/webhook-queue.ts';
import { cleanEnv, runCommand } from '../../support/run-script.ts';
import {
  foreignWritableFolder,
  unprivileged,
  unprivilegedFolder,
  unprivilegedIds,
} from '../../support/unprivileged.ts';
import { waitFor } from '../../support/wait-for.ts';
import { failNextDiskCall, stallDiskCalls, type DiskMethod } from '../support/disk-calls.ts';

const job = (n: number): EncodedWebhookJob =>
  encodeWebhookJob({
    dedupeKey: `key-${n}`,
    webhook: 'default',
    receivedAt: '2026-11-21T00:00:00.000Z',
    event: 'post.didCreate',
    data: { n },
  });

/** The segment files in `folder` (a stopped receiver's holds its stopped mark too). */
const segmentsIn = (folder: string) => readdirSync(folder).filter((name) => name.startsWith('segment-'));

describe('the spool', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spool-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('after concurrent appends and a restart', () => {
    it('drains every event once, in append order, and deletes the drained files', async () => {
      const first = await openSpool(dir);
      await Promise.all(Array.from({ length: 50 }, (_, n) => first.append(job(n))));
      expect(first.depth()).to.equal(50);
      await first.close();

      const second = await openSpool(dir);
      expect(await second.counted).to.equal(50);
      expect(second.depth()).to.equal(50);
      const seen: string[] = [];
      expect(await second.drain(async (event) => void seen.push(event.dedupeKey))).to.equal(50);
      expect(seen).to.deep.equal(Array.from({ length: 50 }, (_, n) => `key-${n}`));
      expect(second.depth()).to.equal(0);
      expect(readdirSync(second.dir)).to.deep.equal([]);
      await second.close();
      expect(readdirSync(dir), 'what the two left, once the second closed').to.deep.equal([]);
    });
  });

  // A segment is read whole when drained. Checked only after a group was written, a segment just
  // under the bound took the next group too, up to the 64 MiB a group may hold: twice the bound.
  describe('when a group of appends would take its segment past maxSegmentBytes', () => {
    it('starts a new segment for it, and drains every event once, in order', async () => {
      const maxSegmentBytes = 2_000;
      const spool = await openSpool(dir, { maxSegmentBytes });
      await spool.append(job(0));
      const group = Array.from({ length: 20 }, (_, n) => job(n + 1));
      expect(group.reduce((sum, one) => sum + one.json.length + 1, 0)).to.be.above(maxSegmentBytes);
      await Promise.all(group.map((one) => spool.append(one)));
      const sizes = segmentsIn(spool.dir)
        .sort()
        .map((name) => statSync(join(spool.dir, name)).size);
      expect(sizes, 'segment sizes').to.have.lengthOf(2);
      expect(sizes[0], 'the first segment').to.be.at.most(maxSegmentBytes);
      const seen: string[] = [];
      expect(await spool.drain(async (event) => void seen.push(event.dedupeKey))).to.equal(21);
      expect(seen).to.deep.equal(Array.from({ length: 21 }, (_, n) => `key-${n}`));
      await spool.close();
    });
  });

  // Two receivers on one SPOOL_DIR: "one per core" with the default SPOOL_DIR, or a rolling restart
  // that starts the new process before the old one has stopped.
  describe('opened twice on one folder (two receivers on one SPOOL_DIR)', () => {
    it('hands every event either one spooled over exactly once, also what one spools after the other drained', async () => {
      const a = await openSpool(dir);
      const b = await openSpool(dir);
      const spooled: string[] = [];
      const append = async (spool: typeof a, n: number) => {
        await spool.append(job(n));
        spooled.push(`key-${n}`);
      };
      for (const n of [0, 1, 2]) await append(a, n);
      for (const n of [10, 11, 12]) await append(b, n);
      const queued: string[] = [];
      const handler = async (event: EncodedWebhookJob) => void queued.push(event.dedupeKey);
      await a.drain(handler);
      for (const n of [13, 14, 15]) await append(b, n);
      await b.drain(handler);
      await a.drain(handler);
      expect([...queued].sort()).to.deep.equal([...spooled].sort());
      expect(a.depth() + b.depth()).to.equal(0);
      await a.close();
      await b.close();
      expect(readdirSync(dir), 'what two empty spools leave behind').to.deep.equal([]);
    });

    it('leaves alone what another live process spools, and takes it over once that process is killed', async () => {
      const child = spawn(process.execPath, [resolve(import.meta.dirname, 'fixtures/hold-spool.ts'), dir]);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const printed = async (line: string) => {
        while (!output.includes(`${line}\n`)) {
          if (child.exitCode !== null) throw new Error(`hold-spool.ts exited: ${output}`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };
      try {
        await printed('spooled');
        const beside = await openSpool(dir);
        expect(beside.depth(), 'events of the live process this spool counts').to.equal(0);
        const taken: string[] = [];
        await beside.drain(async (event) => void taken.push(event.dedupeKey));
        expect(taken, 'events of the live process a drain handed over').to.deep.equal([]);
        child.stdin.write('more\n');
        await printed('more');
        child.kill('SIGKILL');
        await exited;

        const next = await openSpool(dir);
        expect(await next.counted).to.equal(6);
        expect(next.depth()).to.equal(6);
        const queued: string[] = [];
        await next.drain(async (event) => void queued.push(event.dedupeKey));
        expect(queued).to.deep.equal(['child-0', 'child-1', 'child-2', 'child-3', 'child-4', 'child-5']);
        await beside.close();
        await next.close();
        expect(readdirSync(dir), 'what the killed process left, once taken over').to.deep.equal([]);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });

  // A rolling restart: the new receiver starts while the old one runs, so it takes nothing over at
  // its start; the old one stops afterwards with events spooled.
  describe('running while another receiver on the folder stops with events spooled', () => {
    it(`takes them over after ${DEAD_CHECKS} checks in a row find the other stopped, numbered after its own, and drains them once`, async () => {
      const staying = await openSpool(dir, { adoptQuietMs: 0 });
      const stopping = await openSpool(dir);
      for (const n of [0, 1]) await staying.append(job(n));
      for (const n of [10, 11, 12]) await stopping.append(job(n));
      expect(await staying.adoptOrphans(), 'while the other runs').to.equal(0);
      await stopping.close();
      for (let check = 1; check < DEAD_CHECKS; check += 1)
        expect(await staying.adoptOrphans(), `check ${check} after the stop`).to.equal(0);
      expect(staying.depth()).to.equal(2);
      expect(await staying.adoptOrphans()).to.equal(3);
      expect(staying.depth()).to.equal(5);
      await staying.append(job(2));
      const queued: string[] = [];
      expect(await staying.drain(async (event) => void queued.push(event.dedupeKey))).to.equal(6);
      // Its open segment first (key-2 went there), then those taken over.
      expect(queued).to.deep.equal(['key-0', 'key-1', 'key-2', 'key-10', 'key-11', 'key-12']);
      expect(await staying.adoptOrphans()).to.equal(0);
      await staying.close();
      expect(readdirSync(dir), 'what the two left').to.deep.equal([]);
    });

    it('keeps taking appends while it counts the events of a large spool it took over', async () => {
      const staying = await openSpool(dir, { adoptQuietMs: 0 });
      const stopping = await openSpool(dir);
      await stopping.append(job(10));
      await stopping.close();
      // A long outage's worth behind the stopped receiver: 160 MB of events in its segment.
      const [segment] = segmentsIn(stopping.dir);
      const lines = 160_000;
      appendFileSync(join(stopping.dir, segment ?? ''), `${job(11).json.padEnd(1_000)}\n`.repeat(lines));
      for (let check = 1; check < DEAD_CHECKS; check += 1) expect(await staying.adoptOrphans()).to.equal(0);
      const adoption = staying.adoptOrphans();
      const appended = staying.append(job(1));
      const first = await Promise.race([appended.then(() => 'append'), adoption.then(() => 'take-over')]);
      expect(first, 'the first to settle').to.equal('append');
      expect(await adoption).to.equal(lines + 1);
      expect(staying.depth()).to.equal(lines + 2);
      await staying.drain(async () => undefined);
      expect(staying.depth()).to.equal(0);
      await staying.close();
    });

    it('never takes over a live receiver whose socket file was removed: it makes it again at its next check', async () => {
      // Only the socket keeps b's folder: no wait for its segments to go quiet.
      const a = await openSpool(dir, { adoptQuietMs: 0 });
      const b = await openSpool(dir);
      await b.append(job(1));
      const [socket] = readdirSync(dir).filter((name) => name === `${basename(b.dir)}.sock`);
      expect(socket, "b's socket").to.not.equal(undefined);
      rmSync(join(dir, socket!));
      for (let check = 1; check < DEAD_CHECKS; check += 1) expect(await a.adoptOrphans()).to.equal(0);
      // b's own periodic check comes round within the span of a's checks.
      expect(await b.adoptOrphans()).to.equal(0);
      for (let check = 0; check < 2 * DEAD_CHECKS; check += 1) expect(await a.adoptOrphans()).to.equal(0);
      expect(b.depth()).to.equal(1);
      const queued: string[] = [];
      await b.drain(async (event) => void queued.push(event.dedupeKey));
      expect(queued).to.deep.equal(['key-1']);
      await a.close();
      await b.close();
    });

    it('is not taken by a receiver starting while the live one’s socket file is removed', async () => {
      const live = await openSpool(dir);
      await live.append(job(1));
      rmSync(join(dir, `${basename(live.dir)}.sock`));
      // Before the live one's own check (every 5 s) makes its socket again.
      const starting = await openSpool(dir, { adoptQuietMs: 0 });
      expect(starting.depth(), 'events the starting receiver took').to.equal(0);
      expect(readdirSync(live.dir)).to.have.lengthOf(1);
      await live.adoptOrphans();
      for (let check = 0; check < 2 * DEAD_CHECKS; check += 1)
        expect(await starting.adoptOrphans()).to.equal(0);
      const queued: string[] = [];
      await live.drain(async (event) => void queued.push(event.dedupeKey));
      expect(queued).to.deep.equal(['key-1']);
      await live.close();
      await starting.close();
    });

    it('is taken at start once its owner stopped with events left (its stopped mark), and by the running checks when the mark is missing', async () => {
      const stopped = await openSpool(dir);
      await stopped.append(job(1));
      await stopped.close();
      expect(readdirSync(stopped.dir)).to.include('.stopped');
      const next = await openSpool(dir, { adoptQuietMs: 0 });
      expect(next.depth(), 'taken at its start').to.equal(1);
      // A folder without the mark (a receiver of an earlier version, or one whose mark failed).
      const older = await openSpool(dir);
      await older.append(job(2));
      await older.close();
      rmSync(join(older.dir, '.stopped'));
      const later = await openSpool(dir, { adoptQuietMs: 0 });
      expect(later.depth(), 'taken at its start').to.equal(0);
      for (let check = 1; check < DEAD_CHECKS; check += 1) expect(await later.adoptOrphans()).to.equal(0);
      expect(await later.adoptOrphans()).to.equal(1);
      const queued: string[] = [];
      await next.drain(async (event) => void queued.push(event.dedupeKey));
      await later.drain(async (event) => void queued.push(event.dedupeKey));
      expect(queued).to.deep.equal(['key-1', 'key-2']);
      await next.close();
      await later.close();
      expect(readdirSync(dir), 'what they all left').to.deep.equal([]);
    });

    it('leaves a stopped receiver’s folder alone while a segment of it changed within adoptQuietMs', async () => {
      const staying = await openSpool(dir, { adoptQuietMs: 60_000 });
      const stopping = await openSpool(dir);
      await stopping.append(job(1));
      const left = join(dir, basename(stopping.dir));
      await stopping.close();
      for (let check = 0; check < 2 * DEAD_CHECKS; check += 1)
        expect(await staying.adoptOrphans(), `check ${check}`).to.equal(0);
      const [segment] = segmentsIn(left);
      const anHourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(join(left, segment!), anHourAgo, anHourAgo);
      expect(await staying.adoptOrphans()).to.equal(1);
      await staying.close();
    });

    // A number in its folder already taken (a segment an earlier take-over that failed part-way
    // moved in without counting it): neither overwritten nor left uncounted.
    it('numbers what it takes over past any segment already in its folder, and counts that one too', async () => {
      const staying = await openSpool(dir, { adoptQuietMs: 0 });
      const stopping = await openSpool(dir);
      await staying.append(job(0));
      await stopping.append(job(10));
      await stopping.close();
      for (let check = 1; check < DEAD_CHECKS; check += 1) expect(await staying.adoptOrphans()).to.equal(0);
      // Under the number the take-over is to use first.
      appendFileSync(join(staying.dir, 'segment-000000000002.ndjson'), `${job(5).json}\n`);
      expect(await staying.adoptOrphans(), 'the segment found in its folder and the one taken over').to.equal(
        2,
      );
      expect(staying.depth()).to.equal(3);
      await staying.append(job(1));
      const queued: string[] = [];
      await staying.drain(async (event) => void queued.push(event.dedupeKey));
      expect(queued).to.deep.equal(['key-0', 'key-1', 'key-5', 'key-10']);
      await staying.close();
    });
  });

  // A stopped receiver's folder whose segments cannot be moved (a damaged or locked folder: an
  // immutable one as root, a read-only one otherwise) failed the whole take-over: every start
  // exited, and a running receiver's checks stopped at it, before the folders after it.
  describe('with a stopped receiver’s folder that cannot be taken over', () => {
    const lock = (folder: string): (() => void) => {
      if (process.getuid?.() === 0) {
        execFileSync('chattr', ['+i', folder]);
        return () => execFileSync('chattr', ['-i', folder]);
      }
      chmodSync(folder, 0o500);
      return () => chmodSync(folder, 0o700);
    };

    it('starts, takes the other stopped receivers’ events, reports that folder, and takes it once it can', async function () {
      const stuck = await openSpool(dir);
      const other = await openSpool(dir);
      await stuck.append(job(1));
      await other.append(job(2));
      await stuck.close();
      await other.close();
      let unlock: () => void;
      try {
        unlock = lock(stuck.dir);
      } catch (error) {
        // Root without CAP_LINUX_IMMUTABLE (a default container) can lock no folder: shown as
        // pending, not passed.
        this.skip();
        throw error;
      }
      const failed: string[] = [];
      let spool: Awaited<ReturnType<typeof openSpool>> | undefined;
      try {
        spool = await openSpool(dir, {
          adoptQuietMs: 0,
          onTakeOverFailed: (path) => failed.push(path),
        });
        expect(spool.depth(), 'the other receiver’s event').to.equal(1);
        expect(failed).to.deep.equal([stuck.dir]);
        // The running checks try it once they found its owner dead DEAD_CHECKS times in a row.
        let takenWhileLocked = 0;
        for (let check = 0; check < DEAD_CHECKS + 1; check += 1)
          takenWhileLocked += await spool.adoptOrphans();
        expect(takenWhileLocked, 'still locked: left for later').to.equal(0);
        expect(failed, 'reported once, however often it is tried').to.deep.equal([stuck.dir]);
        expect(readdirSync(stuck.dir), 'its segment stays where it is').to.include(
          'segment-000000000001.ndjson',
        );
      } finally {
        unlock();
      }
      if (!spool) throw new Error('the spool did not open');
      expect(await spool.adoptOrphans(), 'taken at the next check').to.equal(1);
      const queued: string[] = [];
      await spool.drain(async (event) => void queued.push(event.dedupeKey));
      expect(queued.sort()).to.deep.equal(['key-1', 'key-2']);
      await spool.close();
    });

    // A receiver that died leaves no stopped mark: its socket file, which refuses, is what makes a
    // start take its folder at once. A failed take-over deleted it, and later starts left the
    // folder's events alone (only a receiver running for a minute and more took them).
    it('keeps a killed receiver’s socket, so the next start takes its events', async function () {
      const child = spawn(process.execPath, [resolve(import.meta.dirname, 'fixtures/hold-spool.ts'), dir]);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      while (!output.includes('spooled\n')) {
        if (child.exitCode !== null) throw new Error(`hold-spool.ts exited: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      child.kill('SIGKILL');
      await exited;
      const [killed] = readdirSync(dir).filter((name) => name.startsWith('instance-') && !name.includes('.'));
      if (killed === undefined) throw new Error('the killed receiver left no folder');
      let unlock: () => void;
      try {
        unlock = lock(join(dir, killed));
      } catch (error) {
        this.skip();
        throw error;
      }
      try {
        const failed: string[] = [];
        const first = await openSpool(dir, { onTakeOverFailed: (path) => failed.push(path) });
        expect(failed).to.deep.equal([join(dir, killed)]);
        await first.close();
      } finally {
        unlock();
      }
      const next = await openSpool(dir);
      expect(await next.counted, 'the killed receiver’s events, taken at start').to.equal(3);
      await next.close();
    });
  });

  describe('with segments directly in the folder (spooled before receivers had folders of their own)', () => {
    it('takes them over, drains them in order and leaves the folder empty', async () => {
      const lines = (from: number) => [from, from + 1].map((n) => `${job(n).json}\n`).join('');
      appendFileSync(join(dir, 'segment-000000000007.ndjson'), lines(0));
      appendFileSync(join(dir, 'segment-000000000008.ndjson'), lines(2));
      const spool = await openSpool(dir);
      expect(await spool.counted).to.equal(4);
      expect(spool.depth()).to.equal(4);
      const seen: string[] = [];
      await spool.drain(async (event) => void seen.push(event.dedupeKey));
      expect(seen).to.deep.equal(['key-0', 'key-1', 'key-2', 'key-3']);
      await spool.close();
      expect(readdirSync(dir)).to.deep.equal([]);
    });
  });

  // A restart during a long Redis outage finds gigabytes spooled: the receiver listens once the
  // spool is open, and reading every segment first kept it off the network for seconds a gigabyte.
  describe('opened over segments that take long to read', () => {
    it('opens before reading them, each counted as one event until it is read', async () => {
      const lines = (from: number, count: number) =>
        Array.from({ length: count }, (_, n) => `${job(from + n).json}\n`).join('');
      appendFileSync(join(dir, 'segment-000000000001.ndjson'), lines(0, 2));
      appendFileSync(join(dir, 'segment-000000000002.ndjson'), lines(2, 3));
      const spool = await openSpool(dir);
      // No read of a file can have ended before this line runs: the count is the stand-in's.
      expect(spool.depth(), 'before they are read').to.equal(2);
      expect(await spool.counted).to.equal(5);
      expect(spool.depth()).to.equal(5);
      const seen: string[] = [];
      await spool.drain(async (event) => void seen.push(event.dedupeKey));
      expect(seen).to.deep.equal(['key-0', 'key-1', 'key-2', 'key-3', 'key-4']);
      expect(spool.depth()).to.equal(0);
      await spool.close();
    });
  });

  // A SPOOL_DIR others may write in (an emptyDir, an fsGroup volume, a shared folder): whatever
  // they put there is not the receiver's to queue, since a spooled event skips every check.
  describe('with entries another user planted in a shared SPOOL_DIR', () => {
    const forged = () =>
      encodeWebhookJob({
        dedupeKey: 'forged',
        webhook: 'default',
        receivedAt: '2026-11-21T00:00:00.000Z',
        event: 'comment.didCreate',
        data: { forged: true },
      });

    /** What a receiver that stopped left: its folder, one segment, its stopped mark; and one in the root. */
    function leaveOwnSegments(): void {
      const own = (n: number) => `${job(n).json}\n`;
      mkdirSync(join(dir, 'instance-0123456789ab'), { mode: 0o700 });
      appendFileSync(join(dir, 'instance-0123456789ab', 'segment-000000000001.ndjson'), own(1));
      appendFileSync(join(dir, 'instance-0123456789ab', '.stopped'), '');
      appendFileSync(join(dir, 'segment-000000000001.ndjson'), own(0));
    }

    /** Opens the spool on `dir`, drains it, and tells what it queued and what it refused. */
    async function openAndDrain() {
      const refused: { path: string; reason: string }[] = [];
      const spool = await openSpool(dir, {
        onForeignEntry: (path, reason) => refused.push({ path, reason }),
      });
      const seen: string[] = [];
      await spool.drain(async (event) => void seen.push(event.dedupeKey));
      await spool.close();
      return { seen, refused: refused.map((entry) => entry.path).sort(), foreign: spool.foreignEntries() };
    }

    it('adopts its own segments, none through a symlink named like a segment', async () => {
      leaveOwnSegments();
      // A symlink named like a segment, to a file of the receiver's user that holds a job.
      const target = join(dir, 'not-a-segment.txt');
      appendFileSync(target, `${forged().json}\n`);
      symlinkSync(target, join(dir, 'segment-000000000003.ndjson'));
      const { seen, refused, foreign } = await openAndDrain();
      expect(seen).to.deep.equal(['key-0', 'key-1']);
      expect(refused).to.deep.equal([join(dir, 'segment-000000000003.ndjson')]);
      expect(foreign).to.equal(1);
      // Left where they were, for an operator to look at.
      expect(readdirSync(dir)).to.include.members(['segment-000000000003.ndjson', 'not-a-segment.txt']);
    });

    // Only root can give a file away, so only a suite run as root (as CI's is) has this case; as
    // another user it is not defined, rather than passing without its other user's files.
    if (process.getuid?.() === 0) {
      it('adopts none in a folder or a file of another uid', async () => {
        leaveOwnSegments();
        // A folder named like an instance's, and a segment in the root, both another user's.
        const planted = join(dir, 'instance-aaaaaaaaaaaa');
        mkdirSync(planted, { mode: 0o777 });
        appendFileSync(join(planted, 'segment-000000000001.ndjson'), `${forged().json}\n`);
        appendFileSync(join(dir, 'segment-000000000002.ndjson'), `${forged().json}\n`);
        chownSync(planted, unprivilegedIds.uid, unprivilegedIds.gid);
        chownSync(join(planted, 'segment-000000000001.ndjson'), unprivilegedIds.uid, unprivilegedIds.gid);
        chownSync(join(dir, 'segment-000000000002.ndjson'), unprivilegedIds.uid, unprivilegedIds.gid);
        const { seen, refused, foreign } = await openAndDrain();
        expect(seen).to.deep.equal(['key-0', 'key-1']);
        expect(refused).to.deep.equal([join(dir, 'segment-000000000002.ndjson'), planted].sort());
        expect(foreign).to.equal(2);
        expect(readdirSync(dir)).to.include.members(['instance-aaaaaaaaaaaa', 'segment-000000000002.ndjson']);
      });
    }
  });

  describe('when the handler fails part-way', () => {
    it('stops, keeps the rest, and the next drain resumes after the last handled event', async () => {
      const spool = await openSpool(dir);
      for (let n = 0; n < 5; n += 1) await spool.append(job(n));
      const seen: string[] = [];
      let failOn: string | undefined = 'key-3';
      const handler = async (event: EncodedWebhookJob) => {
        if (event.dedupeKey === failOn) throw new Error('redis is down');
        seen.push(event.dedupeKey);
      };
      await expect(spool.drain(handler)).to.be.rejectedWith('redis is down');
      expect(spool.depth()).to.equal(2);
      await spool.append(job(5));
      failOn = undefined;
      await spool.drain(handler);
      expect(seen).to.deep.equal(['key-0', 'key-1', 'key-2', 'key-3', 'key-4', 'key-5']);
      expect(spool.depth()).to.equal(0);
      await spool.close();
    });
  });

  // During a long Redis outage the drainer tries every second; a pass that closed the segment being
  // appended to left one file per second behind (28,800 after 8 hours), each pass listing them all.
  describe('while every drain fails (a long Redis outage) and events keep arriving', () => {
    it('keeps appending to the open segment, and once the handler works drains every event in order', async () => {
      const spool = await openSpool(dir);
      const down = () => Promise.reject(new Error('redis is down'));
      for (let n = 0; n < 200; n += 1) {
        await spool.append(job(n));
        await expect(spool.drain(down)).to.be.rejectedWith('redis is down');
      }
      expect(readdirSync(spool.dir), 'segment files after 200 failed passes').to.have.length.at.most(2);
      expect(spool.depth()).to.equal(200);
      const seen: string[] = [];
      expect(await spool.drain(async (event) => void seen.push(event.dedupeKey))).to.equal(200);
      expect(seen).to.deep.equal(Array.from({ length: 200 }, (_, n) => `key-${n}`));
      expect(readdirSync(spool.dir)).to.deep.equal([]);
      await spool.close();
    });
  });

  describe('when the drain is stopped (a shutdown) part-way', () => {
    it('returns after the event in hand, keeps the rest on disk, and the next drain resumes there', async () => {
      const spool = await openSpool(dir);
      for (let n = 0; n < 5; n += 1) await spool.append(job(n));
      const stop = new AbortController();
      const seen: string[] = [];
      const handler = async (event: EncodedWebhookJob) => {
        seen.push(event.dedupeKey);
        if (event.dedupeKey === 'key-1') stop.abort();
      };
      expect(await spool.drain(handler, stop.signal)).to.equal(2);
      expect(spool.depth()).to.equal(3);
      expect(readdirSync(spool.dir)).to.have.lengthOf(1);
      expect(await spool.drain(handler)).to.equal(3);
      expect(seen).to.deep.equal(['key-0', 'key-1', 'key-2', 'key-3', 'key-4']);
      expect(readdirSync(spool.dir)).to.deep.equal([]);
      await spool.close();
    });
  });

  // A write that fails part-way (a disk that fills up) or whose fsync fails can leave complete
  // lines on disk that the failed appends never counted; a drain hands them over all the same.
  describe('when a disk write fails after some of it reached the file', () => {
    const failNext = (method: DiskMethod, fail: (handle: FileHandle, data: Buffer) => Promise<void>) =>
      failNextDiskCall(dir, method, fail);

    it('counts the lines a torn group write left on disk once it reads them, and never goes below zero', async () => {
      const spool = await openSpool(dir);
      await spool.append(job(0));
      // ENOSPC after the first line and a half of a group of three.
      const restore = await failNext('appendFile', async (handle, data) => {
        const half = data.subarray(0, data.indexOf('\n') + 10);
        await handle.write(half);
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      });
      try {
        const results = await Promise.allSettled([
          spool.append(job(1)),
          spool.append(job(2)),
          spool.append(job(3)),
        ]);
        expect(results.map((result) => result.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
      } finally {
        restore();
      }
      const seen: string[] = [];
      expect(await spool.drain(async (event) => void seen.push(event.dedupeKey))).to.equal(2);
      expect(seen).to.deep.equal(['key-0', 'key-1']);
      expect(spool.depth()).to.equal(0);
      // So the next spooled event is counted, and the drainer (which skips an empty spool) sees it.
      await spool.append(job(4));
      expect(spool.depth()).to.equal(1);
      await spool.close();
    });

    // The new segment was kept as the one appended to though its folder's fsync failed: the next
    // appends went into it, were fsynced and acknowledged, while its entry in the folder had never
    // reached the disk (a power loss could take the file and them). A new segment takes them now,
    // its entry synced before any of them is acknowledged.
    it('never acknowledges an append into a segment whose entry in the folder failed to sync', async () => {
      const spool = await openSpool(dir);
      // The first sync of the spool: the folder's, after the first segment is made.
      const restore = await failNext('sync', () =>
        Promise.reject(Object.assign(new Error('input/output error'), { code: 'EIO' })),
      );
      try {
        await expect(spool.append(job(0))).to.be.rejectedWith('input/output error');
      } finally {
        restore();
      }
      await spool.append(job(1));
      // Two segment files: the one whose entry failed (empty), and the one job 1 went into.
      expect(segmentsIn(spool.dir)).to.have.lengthOf(2);
      const seen: string[] = [];
      expect(await spool.drain(async (event) => void seen.push(event.dedupeKey))).to.equal(1);
      expect(seen).to.deep.equal(['key-1']);
      await spool.close();
    });

    // A delete whose folder sync failed was remembered for a retry that only segments still
    // listed got: the file was gone, so never again, and the spool said it had work for good (a
    // drain pass every second, each closing the segment appended to).
    it('retries the folder sync of a drained segment whose delete did not reach the disk, then has no work', async () => {
      const failed: string[] = [];
      const spool = await openSpool(dir, { onDeleteFailed: (name) => failed.push(name) });
      await spool.append(job(0));
      const restore = await failNext('sync', () =>
        Promise.reject(Object.assign(new Error('input/output error'), { code: 'EIO' })),
      );
      try {
        expect(await spool.drain(async () => undefined)).to.equal(1);
      } finally {
        restore();
      }
      expect(failed, 'the folder sync after the delete failed (the test needs that)').to.have.lengthOf(1);
      expect(segmentsIn(spool.dir)).to.deep.equal([]);
      expect(spool.hasWork()).to.equal(true);
      expect(await spool.drain(async () => undefined)).to.equal(0);
      expect(spool.hasWork()).to.equal(false);
      await spool.close();
    });

    it('counts a line whose fsync failed once a drain reads it', async () => {
      const spool = await openSpool(dir);
      await spool.append(job(0));
      const restore = await failNext('sync', () =>
        Promise.reject(Object.assign(new Error('input/output error'), { code: 'EIO' })),
      );
      try {
        await expect(spool.append(job(1))).to.be.rejectedWith('input/output error');
      } finally {
        restore();
      }
      expect(spool.depth(), 'the failed line may be on disk: counted until a drain knows').to.equal(2);
      const seen: string[] = [];
      await spool.drain(async (event) => void seen.push(event.dedupeKey));
      expect(seen).to.deep.equal(['key-0', 'key-1']);
      expect(spool.depth()).to.equal(0);
      await spool.append(job(2));
      expect(spool.depth()).to.equal(1);
      await spool.close();
    });

    // A full disk refuses the first byte of every write: each flush opened a new segment for its
    // group and left it empty, a file and a folder sync per group commit for as long as the disk
    // stayed full (inodes run out too), and counted every refused event in the spool's depth.
    it('on a disk that refuses every byte: no new segment file per refused write, and nothing counted', async () => {
      const spool = await openSpool(dir);
      await spool.append(job(0));
      const files = segmentsIn(spool.dir);
      for (let n = 1; n <= 5; n += 1) {
        const restore = await failNext('appendFile', () =>
          Promise.reject(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })),
        );
        try {
          await expect(spool.append(job(n))).to.be.rejectedWith('no space left on device');
        } finally {
          restore();
        }
      }
      expect(segmentsIn(spool.dir)).to.deep.equal(files);
      // Room again: the next event goes on in the same segment (after the last refusal's check).
      await spool.append(job(6));
      expect(spool.depth(), 'the refused events are not on disk').to.equal(2);
      expect(segmentsIn(spool.dir)).to.deep.equal(files);
      const seen: string[] = [];
      expect(await spool.drain(async (event) => void seen.push(event.dedupeKey))).to.equal(2);
      expect(seen).to.deep.equal(['key-0', 'key-6']);
      expect(spool.depth()).to.equal(0);
      await spool.close();
    });

    it('uncounts a failed write that left nothing once a drain finds it missing', async () => {
      const spool = await openSpool(dir);
      await spool.append(job(0));
      const restore = await failNext('appendFile', () =>
        Promise.reject(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })),
      );
      try {
        await expect(spool.append(job(1))).to.be.rejected;
      } finally {
        restore();
      }
      expect(await spool.drain(async () => undefined)).to.equal(1);
      expect(spool.depth()).to.equal(0);
      await spool.close();
    });
  });

  describe('while the disk stalls (an fsync that does not return)', () => {
    const lineBytes = Buffer.byteLength(`${job(1).json}\n`);

    it('refuses at once, keeping nothing, an append past maxPendingBytes waiting, and takes appends again once the disk answers', async () => {
      const spool = await openSpool(dir, { maxPendingBytes: 3 * lineBytes });
      await spool.append(job(0));
      const disk = await stallDiskCalls(dir, 'sync');
      let waiting: Promise<void>[];
      try {
        waiting = [spool.append(job(1)), spool.append(job(2)), spool.append(job(3))];
        await waitFor(() => disk.waiting() === 1, 5_000, 'the fsync of the three appends');
        await expect(spool.append(job(4))).to.be.rejectedWith(SpoolFullError, `${3 * lineBytes} bytes`);
      } finally {
        disk.restore();
        disk.answer();
      }
      await Promise.all(waiting);
      // Room again once the disk answered.
      await spool.append(job(5));
      const seen: string[] = [];
      await spool.drain(async (event) => void seen.push(event.dedupeKey));
      expect(seen).to.deep.equal(['key-0', 'key-1', 'key-2', 'key-3', 'key-5']);
      await spool.close();
    });

    // Only a failed write, a missing folder or a folder without rights made the check fail: with
    // Redis down and an fsync that never returned, every delivery was answered 503 (late, then
    // full) while /readyz said the spool was fine, so a balancer kept sending to this receiver.
    it('reports the spool unwritable while an append has waited past stalledAfterMs, and writable once the disk answers', async () => {
      const spool = await openSpool(dir, { stalledAfterMs: 200 });
      await spool.append(job(0));
      const disk = await stallDiskCalls(dir, 'sync');
      let waiting: Promise<void> | undefined;
      try {
        waiting = spool.append(job(1));
        await waitFor(() => disk.waiting() === 1, 5_000, 'the fsync of the append');
        // Not stalled yet: a write in progress is how every append goes.
        await spool.checkWritable();
        await new Promise((resolve) => setTimeout(resolve, 300));
        await expect(spool.checkWritable()).to.be.rejectedWith(
          /spool writes stalled: an append has waited \d+ ms/,
        );
      } finally {
        disk.restore();
        disk.answer();
      }
      await waiting;
      await spool.checkWritable();
      expect(await spool.drain(async () => undefined)).to.equal(2);
      await spool.close();
    });

    it('takes an event larger than maxPendingBytes while nothing else waits', async () => {
      const spool = await openSpool(dir, { maxPendingBytes: 10 });
      await spool.append(job(0));
      await spool.append(job(1));
      await expect(Promise.all([spool.append(job(2)), spool.append(job(3))])).to.be.rejectedWith(
        SpoolFullError,
      );
      expect(await spool.drain(async () => undefined)).to.equal(3);
      await spool.close();
    });
  });

  describe('with a torn last line (a crash during an append)', () => {
    it('skips the incomplete line, reports it, and drains the complete ones', async () => {
      const first = await openSpool(dir);
      await first.append(job(1));
      await first.close();
      const [segment] = segmentsIn(first.dir);
      appendFileSync(join(first.dir, segment!), '{"dedupeKey":"key-2","webh');

      const corrupt: string[] = [];
      const second = await openSpool(dir, { onCorruptLine: (name) => corrupt.push(name) });
      expect(second.depth()).to.equal(1);
      const seen: string[] = [];
      await second.drain(async (event) => void seen.push(event.dedupeKey));
      expect(seen).to.deep.equal(['key-1']);
      expect(corrupt).to.deep.equal([segment]);
      await second.close();
    });
  });

  // A receiver killed between creating a segment and the end of its first append leaves an empty
  // file or one torn line: nothing acknowledged, but counted as no event it was never drained,
  // and the folder went from receiver to receiver at every stop and start, stopped mark and all.
  describe('with a stopped receiver’s segments that hold no complete line', () => {
    const leaveEmptyAndTorn = async (): Promise<string[]> => {
      const stopped = await openSpool(dir);
      await stopped.append(job(1));
      await stopped.close();
      const [segment] = segmentsIn(stopped.dir);
      writeFileSync(join(stopped.dir, segment!), '');
      const torn = segmentName(Number(/\d+/.exec(segment!)![0]) + 1);
      writeFileSync(join(stopped.dir, torn), '{"dedupeKey":"key-2","webh', { mode: 0o600 });
      return [segment!, torn];
    };

    it('drains and deletes them when taken at start, reports the torn line, and leaves nothing', async () => {
      const [, torn] = await leaveEmptyAndTorn();
      const corrupt: string[] = [];
      const next = await openSpool(dir, { onCorruptLine: (name) => corrupt.push(name) });
      expect(next.hasWork(), 'the drainer visits them').to.equal(true);
      const seen: string[] = [];
      await next.drain(async (event) => void seen.push(event.dedupeKey));
      expect(seen).to.deep.equal([]);
      expect(corrupt).to.deep.equal([torn]);
      expect([next.depth(), next.hasWork()]).to.deep.equal([0, false]);
      await next.close();
      expect(readdirSync(dir), 'what it left').to.deep.equal([]);
    });

    it('drains and deletes them when a running receiver takes them over', async () => {
      const running = await openSpool(dir, { adoptQuietMs: 0 });
      await leaveEmptyAndTorn();
      for (let check = 0; check < DEAD_CHECKS; check += 1) await running.adoptOrphans();
      expect(running.hasWork(), 'the drainer visits them').to.equal(true);
      await running.drain(async () => undefined);
      expect([running.depth(), running.hasWork()]).to.deep.equal([0, false]);
      await running.close();
      expect(readdirSync(dir), 'what it left').to.deep.equal([]);
    });
  });

  // A take-over whose listing failed after its renames left the next segment number on a segment
  // moved in, which may end in a dead receiver's torn line: opened to append, the first event
  // acknowledged after it joined that fragment and was dropped as corrupt.
  describe('when the next segment number names a file already in its folder', () => {
    it('never appends behind it: the event goes to a segment of its own and drains', async () => {
      const spool = await openSpool(dir);
      for (let seq = 1; seq <= 3; seq += 1)
        writeFileSync(join(spool.dir, segmentName(seq)), '{"dedupeKey":"key-torn","webh', { mode: 0o600 });
      await spool.append(job(7));
      await spool.close();
      const seen: string[] = [];
      const corrupt: string[] = [];
      const reopened = await openSpool(dir, { onCorruptLine: (name) => corrupt.push(name) });
      await reopened.drain(async (event) => void seen.push(event.dedupeKey));
      expect(seen).to.deep.equal(['key-7']);
      expect(corrupt).to.have.lengthOf(3);
      await reopened.close();
    });
  });

  // A segment that cannot be read (an I/O error, a directory where a file was) ended every drain
  // pass at it: the acknowledged events of every later segment stayed spooled for good.
  describe('with a segment that cannot be read among others', () => {
    it('drains the others, the one open for appends too, keeps it, and still fails the pass so the drainer says so', async () => {
      const first = await openSpool(dir);
      await first.append(job(1));
      await first.close();
      const second = await openSpool(dir);
      // Before the segment taken over: a directory, which cannot be read as a file.
      const unreadable = segmentName(0);
      mkdirSync(join(second.dir, unreadable));
      // And one appended since, in the segment open for appends.
      await second.append(job(2));
      const seen: string[] = [];
      await second
        .drain(async (event) => void seen.push(event.dedupeKey))
        .then(
          () => expect.fail('the pass should fail'),
          (error: NodeJS.ErrnoException) => expect(error.code).to.equal('EISDIR'),
        );
      expect(seen).to.deep.equal(['key-1', 'key-2']);
      expect(segmentsIn(second.dir)).to.deep.equal([unreadable]);
      await second.close();
    });
  });

  // Opening counted every segment by reading it, strictly: one that could not be read ended the
  // start-up, and every receiver started on the folder after it, in turn (a crash loop with every
  // other acknowledged event still spooled).
  describe('with a segment that cannot be read among those a stopped receiver left', () => {
    it('opens, drains the others, keeps it, and fails the pass so the drainer says so', async () => {
      const first = await openSpool(dir);
      await first.append(job(1));
      // A file too large to read (sparse: it takes no room on the disk).
      writeFileSync(join(first.dir, segmentName(0)), '');
      truncateSync(join(first.dir, segmentName(0)), 3 * 1024 ** 3);
      await first.close();
      const second = await openSpool(dir);
      expect(second.depth()).to.be.at.least(2);
      const seen: string[] = [];
      await second
        .drain(async (event) => void seen.push(event.dedupeKey))
        .then(
          () => expect.fail('the pass should fail'),
          (error: NodeJS.ErrnoException) => expect(error.code).to.equal('ERR_FS_FILE_TOO_LARGE'),
        );
      expect(seen).to.deep.equal(['key-1']);
      expect(segmentsIn(second.dir)).to.have.lengthOf(1);
      await second.close();
    });
  });

  describe('with a line that is JSON but not a job, and a job whose data held line breaks', () => {
    it('skips and reports the first, and hands back the second as one line, as written', async () => {
      const first = await openSpool(dir);
      const multiLine: EncodedWebhookJob = {
        dedupeKey: 'key-7',
        json: '{"dedupeKey":"key-7","data":{ "a": 1 }}',
      };
      await first.append(multiLine);
      await first.close();
      const [segment] = segmentsIn(first.dir);
      appendFileSync(join(first.dir, segment!), '["not","a","job"]\n');

      const corrupt: string[] = [];
      const second = await openSpool(dir, { onCorruptLine: (name) => corrupt.push(name) });
      const seen: EncodedWebhookJob[] = [];
      await second.drain(async (event) => void seen.push(event));
      expect(seen).to.deep.equal([multiLine]);
      expect(corrupt).to.deep.equal([segment]);
      await second.close();
    });
  });

  describe('with two drains started at once (the drainer timer and a shutdown, say)', () => {
    it('hands every event to a handler exactly once, and both callers get the one count', async () => {
      const spool = await openSpool(dir);
      for (let n = 0; n < 20; n += 1) await spool.append(job(n));
      const seen: string[] = [];
      // A handler that yields, as enqueueing to Redis does, so two drains would interleave.
      const handler = async (event: EncodedWebhookJob) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(event.dedupeKey);
      };
      const counts = await Promise.all([spool.drain(handler), spool.drain(handler)]);
      expect(seen).to.deep.equal(Array.from({ length: 20 }, (_, n) => `key-${n}`));
      expect(counts).to.deep.equal([20, 20]);
      expect(spool.depth()).to.equal(0);
      expect(await spool.drain(handler)).to.equal(0);
      await spool.close();
    });
  });

  // A drained segment whose delete failed would be replayed by the next start, and queued a second
  // time once its dedupe marks have expired.
  describe('when the folder turns read-only while a drained segment is deleted, then writable again', () => {
    it('hands every event over once, and deletes the segment on a later pass so no start replays it', async () => {
      const spoolDir = unprivilegedFolder(dir, 'spool');
      const script = resolve(import.meta.dirname, 'fixtures/read-only-delete.ts');
      const { command, args } = unprivileged(process.execPath, [script, spoolDir]);
      const result = await runCommand(command, args, cleanEnv(), 30_000);
      expect(result.code, result.stderr).to.equal(0);
      const seen = JSON.parse(result.stdout) as {
        queued: string[];
        whileReadOnly: { files: string[]; depth: number; queued: number };
        afterwards: { files: string[] };
        restarted: { depth: number };
      };
      expect(seen.whileReadOnly.files, 'the delete was refused (the test needs that)').to.have.lengthOf(1);
      expect(seen.whileReadOnly).to.deep.include({ depth: 0, queued: 3 });
      expect(seen.afterwards.files, 'files left once the folder is writable again').to.deep.equal([]);
      expect(seen.restarted.depth, 'events the next start would replay').to.equal(0);
      expect(seen.queued).to.deep.equal(['key-0', 'key-1', 'key-2']);
    });
  });

  // A start that took a stopped receiver's segments over and then failed (a segment it could not
  // read) released its socket without saying it had stopped: the next start left that folder to
  // running receivers' checks (a minute and more), and with none running, for good.
  // As the sparse file above, with the error a disk gives: its own user may not read the file.
  describe('when a start takes over a stopped receiver’s segment it cannot read', () => {
    it('starts, counts it as one event, and drains it once the disk answers', async () => {
      const spoolDir = unprivilegedFolder(dir, 'spool');
      const script = resolve(import.meta.dirname, 'fixtures/unreadable-segment-at-start.ts');
      const { command, args } = unprivileged(process.execPath, [script, spoolDir]);
      const result = await runCommand(command, args, cleanEnv(), 30_000);
      expect(result.code, result.stderr).to.equal(0);
      expect(JSON.parse(result.stdout)).to.deep.equal({
        depthAtStart: 1,
        failedDrain: 'EACCES',
        drained: ['key-left'],
      });
    });
  });

  // A handler still waiting for its enqueue when the server's grace period ended fell through to
  // the spool after close: its segment went into a folder no start takes at once.
  describe('once closed', () => {
    it('refuses an append, and leaves no folder or segment behind', async () => {
      const spool = await openSpool(dir);
      await spool.close();
      await expect(spool.append(job(1))).to.be.rejectedWith(SpoolClosedError);
      expect(readdirSync(dir)).to.deep.equal([]);
    });
  });

  describe('when the directory cannot be written', () => {
    it('rejects the append and the writability check', async () => {
      const spool = await openSpool(join(dir, 'sub'));
      rmSync(join(dir, 'sub'), { recursive: true });
      appendFileSync(join(dir, 'sub'), 'a file where the directory was');
      await expect(spool.append(job(1))).to.be.rejected;
      await expect(spool.checkWritable()).to.be.rejected;
      expect(spool.depth()).to.equal(0);
      await spool.close();
    });
  });

  // The folder removed (and made again) by hand while a segment was open: appends went on into
  // the deleted file and were acknowledged, to vanish when it closed.
  describe('when its folder is removed while a segment is open', () => {
    it('keeps what it acknowledges afterwards in a new segment, and drains it', async () => {
      const sub = join(dir, 'sub');
      const spool = await openSpool(sub);
      await spool.append(job(1));
      rmSync(sub, { recursive: true });
      mkdirSync(sub, { mode: 0o700 });
      await spool.append(job(2));
      await spool.append(job(3));
      expect(segmentsIn(spool.dir)).to.have.lengthOf(1);
      const seen: string[] = [];
      await spool.drain(async (event) => void seen.push(event.dedupeKey));
      expect(seen).to.deep.equal(['key-2', 'key-3']);
      expect(spool.depth()).to.equal(0);
      await spool.close();
    });

    // With Redis healthy nothing is written, so nothing made the folder again: /readyz answered 503
    // (ENOENT) on every instance until a restart, and a balancer routing on it refused deliveries
    // the receivers could take.
    it('is writable again at the next check, its folder made again, when nothing was open', async () => {
      const sub = join(dir, 'sub');
      const spool = await openSpool(sub);
      rmSync(sub, { recursive: true });
      await spool.checkWritable();
      expect(statSync(spool.dir).isDirectory()).to.equal(true);
      expect(statSync(spool.dir).mode & 0o777).to.equal(0o700);
      await spool.append(job(1));
      expect(spool.depth()).to.equal(1);
      await spool.close();
    });

    it('drains nothing and counts nothing once the folder is gone and nothing came after', async () => {
      const sub = join(dir, 'sub');
      const spool = await openSpool(sub);
      await spool.append(job(1));
      rmSync(sub, { recursive: true });
      expect(await spool.drain(async () => undefined)).to.equal(0);
      expect(spool.depth()).to.equal(0);
      await spool.close();
    });
  });

  describe('when SPOOL_DIR cannot be used as a folder (a file is in the way)', () => {
    it('refuses to open with a SpoolDirError naming the folder, what failed and why', async () => {
      const file = join(dir, 'file');
      appendFileSync(file, 'a file');
      const refused = await openSpool(file).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).to.be.instanceOf(SpoolDirError);
      expect(refused).to.deep.include({ code: 'SPOOL_DIR_UNUSABLE', dir: file, reason: 'EEXIST' });
      expect((refused as Error).message).to.equal(
        `SPOOL_DIR ${JSON.stringify(file)}: cannot create the folder: EEXIST (a file is in the way of the folder)`,
      );
    });
  });

  describe('with a SPOOL_DIR too long for the path of its owner socket', () => {
    it('refuses to open with a SpoolDirError saying so', async () => {
      const deep = join(dir, 'd'.repeat(100), 'spool');
      const refused = await openSpool(deep).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).to.be.instanceOf(SpoolDirError);
      expect((refused as Error).message).to.match(
        /^SPOOL_DIR ".*": cannot listen on its owner socket: ENAMETOOLONG \(.*at most about 80 characters\)$/,
      );
    });
  });

  // A write that failed once (a full disk, the directory replaced) must not keep /readyz at 503
  // after the disk recovered: with Redis back, nothing more is spooled to prove it.
  describe('after a failed append, once the directory can be written again', () => {
    const breakDirectory = (path: string) => {
      rmSync(path, { recursive: true });
      appendFileSync(path, 'a file where the directory was');
    };
    const repairDirectory = (path: string) => {
      rmSync(path);
      mkdirSync(path, { mode: 0o700 });
    };

    it('is writable again without another append, and leaves no probe file behind', async () => {
      const sub = join(dir, 'sub');
      const spool = await openSpool(sub, { probeIntervalMs: 0 });
      breakDirectory(sub);
      await expect(spool.append(job(1))).to.be.rejected;
      await expect(spool.checkWritable()).to.be.rejected;
      repairDirectory(sub);
      await spool.checkWritable();
      expect(readdirSync(spool.dir)).to.deep.equal([]);
      await spool.append(job(2));
      expect(spool.depth()).to.equal(1);
      await spool.close();
    });

    it('probes the disk at most once per probeIntervalMs, however often it is asked', async () => {
      const sub = join(dir, 'sub');
      // An interval no loaded machine's slow file calls use up before the five asks are done.
      const spool = await openSpool(sub, { probeIntervalMs: 3_000 });
      breakDirectory(sub);
      await expect(spool.append(job(1))).to.be.rejected;
      repairDirectory(sub);
      // Within the interval of the failure the error stands, however often it is asked.
      for (let n = 0; n < 5; n += 1) await expect(spool.checkWritable()).to.be.rejected;
      await new Promise((resolve) => setTimeout(resolve, 3_050));
      await spool.checkWritable();
      await spool.close();
    });
  });

  // Spooled events are raw payloads (user ids, post texts): only the receiver's own user reads them.
  describe('file permissions', () => {
    const mode = (path: string) => statSync(path).mode & 0o777;

    it('creates its directory and its own folder in it 0700, and each segment file 0600', async () => {
      const spoolDir = join(dir, 'spool');
      const spool = await openSpool(spoolDir);
      await spool.append(job(1));
      expect(mode(spoolDir)).to.equal(0o700);
      expect(mode(spool.dir)).to.equal(0o700);
      const files = readdirSync(spool.dir);
      expect(files).to.have.length(1);
      expect(mode(join(spool.dir, files[0]!))).to.equal(0o600);
      await spool.close();
    });

    // SPOOL_DIR=/tmp for a receiver run as root took /tmp's 1777 away from every other user, and
    // SPOOL_DIR=. made the working folder 0700: a folder shared with anything else is left as it is.
    it('leaves the mode of a folder shared with other things (sticky, or holding more than the spool)', async () => {
      const sticky = join(dir, 'sticky');
      mkdirSync(sticky);
      chmodSync(sticky, 0o1777);
      const shared = join(dir, 'shared');
      mkdirSync(shared, { mode: 0o755 });
      chmodSync(shared, 0o755);
      writeFileSync(join(shared, 'notes.txt'), 'not the spool’s');
      for (const [folder, before] of [
        [sticky, 0o1777],
        [shared, 0o755],
      ] as const) {
        const spool = await openSpool(folder);
        await spool.append(job(1));
        expect(statSync(folder).mode & 0o7777, folder).to.equal(before);
        expect(mode(spool.dir)).to.equal(0o700);
        await spool.close();
      }
      // A folder of the spool's own entries only is still made private.
      const own = join(dir, 'own');
      mkdirSync(own, { mode: 0o755 });
      chmodSync(own, 0o755);
      mkdirSync(join(own, 'instance-0123456789ab'), { mode: 0o700 });
      const spool = await openSpool(own);
      expect(mode(own)).to.equal(0o700);
      await spool.close();
    });

    // A Kubernetes emptyDir is root's and 0777; a volume shared through fsGroup is not the
    // receiver's either. Its mode is not the receiver's to change, and the spool must still work.
    it('opens in a folder it may write but does not own, leaving its mode, and spools into a 0700 folder of its own', async () => {
      const foreign = foreignWritableFolder(dir, 'volume');
      expect(statSync(foreign).uid, 'the folder must not be the test user’s').not.to.equal(
        unprivilegedIds.uid,
      );
      const before = mode(foreign);
      const script = resolve(import.meta.dirname, 'fixtures/open-in-folder.ts');
      const { command, args } = unprivileged(process.execPath, [script, foreign]);
      const result = await runCommand(command, args, cleanEnv(), 30_000);
      expect(result.code, result.stderr).to.equal(0);
      const report = JSON.parse(result.stdout) as {
        opened: boolean;
        message?: string;
        folder?: { path: string; mode: number };
        files?: { name: string; mode: number }[];
      };
      expect(report, report.message).to.include({ opened: true });
      expect(report.folder?.path.startsWith(`${foreign}/`), report.folder?.path).to.equal(true);
      expect(report.folder?.mode).to.equal(0o700);
      expect(report.files?.filter((file) => file.name.startsWith('segment-'))).to.deep.equal([
        { name: 'segment-000000000001.ndjson', mode: 0o600 },
      ]);
      expect(mode(foreign)).to.equal(before);
    });

    it('tightens an existing directory that others could read to 0700', async () => {
      const spoolDir = join(dir, 'open');
      mkdirSync(spoolDir);
      chmodSync(spoolDir, 0o755);
      const spool = await openSpool(spoolDir);
      expect(mode(spoolDir)).to.equal(0o700);
      await spool.close();
    });
  });
});
