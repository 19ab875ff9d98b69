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
});
