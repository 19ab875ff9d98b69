import { expect } from 'chai';
import { createStorageGate } from '../../../tray-service/storage/storage-gate.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('createStorageGate', () => {
  it('treats a failure with the storage answering as the job’s own, and stays open', async () => {
    const { logger } = recordingLogger();
    const gate = createStorageGate({ ping: () => Promise.resolve(), logger });
    expect(await gate.isOutage()).to.equal(false);
    expect(gate.isOpen).to.equal(true);
    gate.stop();
  });

  it('shuts while the storage does not answer, probes with backoff, and opens once it answers, each change told and logged once', async () => {
    const { logger, messages } = recordingLogger();
    let up = false;
    let probes = 0;
    const changes: boolean[] = [];
    const gate = createStorageGate({
      ping: () => {
        probes += 1;
        return up ? Promise.resolve() : Promise.reject(new Error('ECONNREFUSED'));
      },
      logger,
      onChange: (open) => changes.push(open),
      firstProbeMs: 10,
      maxProbeMs: 40,
    });
    // Many jobs failing at once share one probe.
    expect(await Promise.all([gate.isOutage(), gate.isOutage(), gate.isOutage()])).to.deep.equal([
      true,
      true,
      true,
    ]);
    expect(probes).to.equal(1);
    let opened = false;
    void gate.whenOpen().then(() => (opened = true));
    await sleep(400);
    expect(opened).to.equal(false);
    // 10, 20, 40, 40, ... ms apart: about 10 probes in 400 ms, not hundreds.
    expect(probes).to.be.within(4, 16);
    up = true;
    await sleep(100);
    expect(opened).to.equal(true);
    expect(gate.isOpen).to.equal(true);
    expect(changes).to.deep.equal([false, true]);
    expect(messages.filter((m) => m.startsWith('storage'))).to.have.length(2);
    gate.stop();
  });

  it('after stop, keeps waiting jobs waiting and probes no more', async () => {
    const { logger } = recordingLogger();
    let probes = 0;
    const gate = createStorageGate({
      ping: () => {
        probes += 1;
        return Promise.reject(new Error('down'));
      },
      logger,
      firstProbeMs: 10,
    });
    await gate.isOutage();
    gate.stop();
    const seen = probes;
    let opened = false;
    void gate.whenOpen().then(() => (opened = true));
    await sleep(100);
    expect(probes).to.be.at.most(seen + 1);
    expect(opened).to.equal(false);
  });

  // Shutdown with the storage answering: bull still hands out jobs whose fetches were already
  // waiting, and queue.close() waits for them; parked at the gate, they held shutdown to its deadline.
  it('after stop with the storage answering, lets jobs through at once', async () => {
    const { logger } = recordingLogger();
    const gate = createStorageGate({ ping: () => Promise.resolve(), logger });
    gate.stop();
    let opened = false;
    void gate.whenOpen().then(() => (opened = true));
    await sleep(50);
    expect(opened).to.equal(true);
  });

  it('after stop, parks the jobs of an outage found then instead of running them again at once', async () => {
    const { logger } = recordingLogger();
    let probes = 0;
    const gate = createStorageGate({
      ping: () => {
        probes += 1;
        return Promise.reject(new Error('down'));
      },
      logger,
      firstProbeMs: 10,
    });
    gate.stop();
    expect(await gate.isOutage()).to.equal(true);
    let opened = false;
    void gate.whenOpen().then(() => (opened = true));
    await sleep(100);
    expect(opened).to.equal(false);
    expect(probes).to.equal(1);
  });

  describe('busy waits (the storage answers but says "not now" to a job)', () => {
    it('waits the time asked, gate open, and lets the job try again', async () => {
      const { logger } = recordingLogger();
      const gate = createStorageGate({ ping: () => Promise.resolve(), logger });
      const started = performance.now();
      await gate.busy(50);
      expect(performance.now() - started).to.be.at.least(45);
      expect(gate.isOpen).to.equal(true);
      gate.stop();
    });

    it('cut short by stop: parks the job and tells the shutdown, which stops waiting for it', async () => {
      const { logger } = recordingLogger();
      const gate = createStorageGate({ ping: () => Promise.resolve(), logger });
      let retried = false;
      void gate.busy(60_000).then(() => (retried = true));
      let parked = false;
      void gate.parkedAfterStop.then(() => (parked = true));
      await sleep(10);
      expect(parked).to.equal(false);
      gate.stop();
      await sleep(10);
      expect(parked).to.equal(true);
      expect(retried).to.equal(false);
    });
  });

  describe('refused writes (a read-only server or a full disk, while the ping passes)', () => {
    it('shuts without probing, lets the refused jobs by, and opens when one of them is done with it', async () => {
      const { logger, messages } = recordingLogger();
      let probes = 0;
      const changes: boolean[] = [];
      const gate = createStorageGate({
        ping: () => {
          probes += 1;
          return Promise.resolve();
        },
        logger,
        onChange: (open) => changes.push(open),
        firstProbeMs: 10,
      });
      await Promise.all([gate.refused(10), gate.refused(10)]);
      expect(gate.isOpen).to.equal(false);
      expect(changes).to.deep.equal([false]);
      // A job that failed otherwise asks the ping, which passes: the failure was its own.
      expect(await gate.isOutage()).to.equal(false);
      let held = false;
      void gate.whenOpen().then(() => (held = true));
      let refusedJob = false;
      void gate.whenOpen(true).then(() => (refusedJob = true));
      await sleep(100);
      expect([held, refusedJob]).to.deep.equal([false, true]);
      // No ping can tell when writes pass again: nothing but the isOutage above asked it.
      expect(probes).to.equal(1);
      gate.leftRefusal();
      await sleep(0);
      expect(held).to.equal(true);
      expect(changes).to.deep.equal([false, true]);
      expect(messages.filter((m) => m.startsWith('storage'))).to.deep.equal([
        'storage answers but refuses writes (read-only or full): the worker takes no new jobs, and the ones it holds try again without spending attempts until a write passes',
        'storage takes writes again: the worker takes jobs again',
      ]);
      gate.stop();
    });

    it('probes like any outage once the storage stops answering, and opens when it answers', async () => {
      const { logger } = recordingLogger();
      let up = false;
      const gate = createStorageGate({
        ping: () => (up ? Promise.resolve() : Promise.reject(new Error('ECONNREFUSED'))),
        logger,
        firstProbeMs: 10,
        maxProbeMs: 20,
      });
      await gate.refused(0);
      expect(await gate.isOutage()).to.equal(true);
      // Now a refused job waits like the rest: the probe decides.
      let refusedJob = false;
      void gate.whenOpen(true).then(() => (refusedJob = true));
      await sleep(60);
      expect(refusedJob).to.equal(false);
      up = true;
      await sleep(60);
      expect(refusedJob).to.equal(true);
      expect(gate.isOpen).to.equal(true);
      gate.stop();
    });

    it('after stop, parks a refused job instead of letting it try again', async () => {
      const { logger } = recordingLogger();
      const gate = createStorageGate({ ping: () => Promise.resolve(), logger });
      gate.stop();
      let retried = false;
      void gate.refused(0).then(() => (retried = true));
      await sleep(50);
      expect(retried).to.equal(false);
      let parked = false;
      void gate.parkedAfterStop.then(() => (parked = true));
      await sleep(0);
      expect(parked).to.equal(true);
    });
  });
});
