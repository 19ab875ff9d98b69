import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createBanRepublisher } from '../../../tray-service/bans/ban-republisher.ts';
import { waitFor } from '../../support/wait-for.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createBanRepublisher', () => {
  it('tries again after a failure, with growing waits, until the republish lands', async () => {
    const tries: number[] = [];
    const republisher = createBanRepublisher({
      republish: async () => {
        tries.push(Date.now());
        if (tries.length < 3) throw new Error('storage down');
      },
      logger,
      firstRetryMs: 40,
      maxRetryMs: 1_000,
    });
    republisher.request();
    await waitFor(() => tries.length === 3, 5_000, 'three tries');
    await sleep(200);
    expect(tries).to.have.lengthOf(3);
    // 40 ms, then 80 ms, less up to a fifth of each.
    expect(tries[1]! - tries[0]!).to.be.at.least(30);
    expect(tries[2]! - tries[1]!).to.be.at.least(60);
    republisher.close();
  });

  it('runs once more after the run under way for any number of requests made meanwhile', async () => {
    let runs = 0;
    let release: () => void = () => undefined;
    const republisher = createBanRepublisher({
      republish: () => {
        runs += 1;
        return new Promise<void>((resolve) => (release = resolve));
      },
      logger,
    });
    republisher.request();
    republisher.request();
    republisher.request();
    expect(runs).to.equal(1);
    release();
    await waitFor(() => runs === 2, 1_000, 'the second run');
    release();
    await sleep(50);
    expect(runs).to.equal(2);
    republisher.close();
  });

  it('stops trying after close', async () => {
    let runs = 0;
    const republisher = createBanRepublisher({
      republish: async () => {
        runs += 1;
        throw new Error('storage down');
      },
      logger,
      firstRetryMs: 20,
    });
    republisher.request();
    await waitFor(() => runs === 1, 1_000, 'the first run');
    republisher.close();
    await sleep(150);
    expect(runs).to.equal(1);
    republisher.request();
    expect(runs).to.equal(1);
  });
});
