import { expect } from 'chai';
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSpool } from '../../../receiver/spool/open-spool.ts';
import { encodeWebhookJob, type EncodedWebhookJob } from '../../../shared/queue/webhook-queue.ts';

const job = (n: number): EncodedWebhookJob =>
  encodeWebhookJob({
    dedupeKey: `key-${n}`,
    webhook: 'default',
    receivedAt: '2026-11-21T00:00:00.000Z',
    event: 'post.didCreate',
    data: { n },
  });

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
      expect(second.depth()).to.equal(50);
      const seen: string[] = [];
      expect(await second.drain(async (event) => void seen.push(event.dedupeKey))).to.equal(50);
      expect(seen).to.deep.equal(Array.from({ length: 50 }, (_, n) => `key-${n}`));
      expect(second.depth()).to.equal(0);
      expect(readdirSync(dir)).to.deep.equal([]);
      await second.close();
    });
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
      expect(readdirSync(dir)).to.have.lengthOf(1);
      expect(await spool.drain(handler)).to.equal(3);
      expect(seen).to.deep.equal(['key-0', 'key-1', 'key-2', 'key-3', 'key-4']);
      expect(readdirSync(dir)).to.deep.equal([]);
      await spool.close();
    });
  });

  describe('with a torn last line (a crash during an append)', () => {
    it('skips the incomplete line, reports it, and drains the complete ones', async () => {
      const first = await openSpool(dir);
      await first.append(job(1));
      await first.close();
      const [segment] = readdirSync(dir);
      appendFileSync(join(dir, segment!), '{"dedupeKey":"key-2","webh');

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

  describe('with a line that is JSON but not a job, and a job whose data held line breaks', () => {
    it('skips and reports the first, and hands back the second as one line, as written', async () => {
      const first = await openSpool(dir);
      const multiLine: EncodedWebhookJob = {
        dedupeKey: 'key-7',
        json: '{"dedupeKey":"key-7","data":{ "a": 1 }}',
      };
      await first.append(multiLine);
      await first.close();
      const [segment] = readdirSync(dir);
      appendFileSync(join(dir, segment!), '["not","a","job"]\n');

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
      expect(readdirSync(sub)).to.deep.equal([]);
      await spool.append(job(2));
      expect(spool.depth()).to.equal(1);
      await spool.close();
    });

    it('probes the disk at most once per probeIntervalMs, however often it is asked', async () => {
      const sub = join(dir, 'sub');
      const spool = await openSpool(sub, { probeIntervalMs: 1_000 });
      breakDirectory(sub);
      await expect(spool.append(job(1))).to.be.rejected;
      repairDirectory(sub);
      // Within the interval of the failure the error stands, however often it is asked.
      for (let n = 0; n < 5; n += 1) await expect(spool.checkWritable()).to.be.rejected;
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      await spool.checkWritable();
      await spool.close();
    });
  });

  // Spooled events are raw payloads (user ids, post texts): only the receiver's own user reads them.
  describe('file permissions', () => {
    const mode = (path: string) => statSync(path).mode & 0o777;

    it('creates its directory 0700 and each segment file 0600', async () => {
      const spoolDir = join(dir, 'spool');
      const spool = await openSpool(spoolDir);
      await spool.append(job(1));
      expect(mode(spoolDir)).to.equal(0o700);
      const files = readdirSync(spoolDir);
      expect(files).to.have.length(1);
      expect(mode(join(spoolDir, files[0]!))).to.equal(0o600);
      await spool.close();
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
