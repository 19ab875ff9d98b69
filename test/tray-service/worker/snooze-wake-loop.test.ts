import { expect } from 'chai';
import type { TrayRecord } from '../../../tray-service/domain/tray-record.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { startSnoozeWakeLoop, type SnoozeWakeLoop } from '../../../tray-service/worker/snooze-wake-loop.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { waitFor } from '../../support/wait-for.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the loop announced, as the live streams' publisher would be told. */
function recordingChanges() {
  const written: TrayRecord[] = [];
  return {
    written,
    changes: { recordsWritten: async (records: readonly TrayRecord[]) => void written.push(...records) },
  };
}

/** `count` records of `user`, snoozed until `until`; their keys. */
async function snoozed(storage: TrayStorage, user: string, count: number, until: number, now: number) {
  const keys = await seedRecords(
    storage,
    Array.from({ length: count }, (_, i) => ({
      userId: user,
      targetId: `p-${i}`,
      lastUpdate: now - 60_000 - i,
    })),
  );
  await storage.inbox!.mark(user, { kind: 'snooze', ids: keys, until }, now);
  return keys;
}

describe('the snooze wake-up loop (worker/snooze-wake-loop.ts)', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const loops: SnoozeWakeLoop[] = [];
  afterEach(async () => {
    for (const loop of loops.splice(0)) await loop.stop();
  });

  it('wakes records as their snooze ends, each announced once, draining batch after batch', async () => {
    const start = Date.now();
    let clock = start;
    const early = await snoozed(suite.storage, 'u-wake', 7, start + 1_000, start);
    const late = await snoozed(suite.storage, 'u-wake-late', 2, start + 60_000, start);
    const { written, changes } = recordingChanges();
    const { logger } = recordingLogger();
    loops.push(
      startSnoozeWakeLoop({
        storage: suite.storage,
        changes,
        logger,
        intervalMs: 20,
        batch: 3,
        now: () => clock,
      }),
    );
    await sleep(200);
    expect(written, 'nothing is due yet').to.deep.equal([]);
    clock = start + 1_000;
    await waitFor(() => written.length >= early.length, 5_000, 'the due records announced');
    await sleep(200);
    expect(written.map((record) => record.key).sort()).to.deep.equal([...early].sort());
    const page = await suite.storage.inbox!.page('u-wake', 'inbox', undefined, 10, clock);
    expect(page.records.map((record) => [record.hasRead, record.isSeen, record.snoozedUntil])).to.deep.equal(
      early.map(() => [false, false, null]),
    );
    const stillSnoozed = await suite.storage.inbox!.page('u-wake-late', 'snoozed', undefined, 10, clock);
    expect(stillSnoozed.records.map((record) => record.key).sort()).to.deep.equal([...late].sort());
  });

  it('stops on shutdown: no round after stop() resolves', async () => {
    const now = Date.now();
    const keys = await snoozed(suite.storage, 'u-stop', 1, now + 300, now);
    const { written, changes } = recordingChanges();
    const { logger } = recordingLogger();
    const loop = startSnoozeWakeLoop({ storage: suite.storage, changes, logger, intervalMs: 10_000 });
    await loop.stop();
    await sleep(500);
    expect(written).to.deep.equal([]);
    const page = await suite.storage.inbox!.page('u-stop', 'snoozed', undefined, 10, Date.now());
    expect(page.records.map((record) => record.key)).to.deep.equal(keys);
  });

  // stop() gave up on a round after 2 s, and the shutdown then closed Redis and the storage: a
  // round that woke its records after that announced them to no stream, and they were no longer due.
  it('waits on stop() for the round under way, however long, so what it woke is announced first', async () => {
    const now = Date.now();
    const keys = await snoozed(suite.storage, 'u-slow-round', 2, now - 1, now - 10_000);
    const { written, changes } = recordingChanges();
    const { logger } = recordingLogger();
    const inbox = suite.storage.inbox!;
    let started = false;
    const slowInbox: typeof inbox = Object.assign(Object.create(inbox) as typeof inbox, {
      wakeDue: async (...args: Parameters<typeof inbox.wakeDue>) => {
        started = true;
        await sleep(2_500);
        return inbox.wakeDue(...args);
      },
    });
    const loop = startSnoozeWakeLoop({ storage: { inbox: slowInbox }, changes, logger, intervalMs: 10_000 });
    await waitFor(() => started, 5_000, 'the round started');
    await loop.stop();
    const woken = written.filter((record) => record.userId === 'u-slow-round');
    expect(woken.map((record) => record.key).sort()).to.deep.equal([...keys].sort());
  });

  describe('while the storage does not answer', () => {
    const postgres = useStoppablePostgres();

    it('logs the failure once when it starts and once when it ends, then wakes what fell due meanwhile', async () => {
      const storage = await postgres.openStorage();
      const now = Date.now();
      const keys = await snoozed(storage, 'u-outage', 2, now + 500, now);
      const { written, changes } = recordingChanges();
      const { logger, messages } = recordingLogger();
      await postgres.stop();
      loops.push(startSnoozeWakeLoop({ storage, changes, logger, intervalMs: 20 }));
      await sleep(1_500);
      const failures = messages.filter((message) => message.startsWith('snooze wake-up failed'));
      expect(failures, messages.join('\n')).to.have.length(1);
      await postgres.start();
      await waitFor(() => written.length === keys.length, 20_000, 'the records due during the outage');
      expect(messages.filter((message) => message === 'snooze wake-up works again')).to.have.length(1);
      expect(messages.filter((message) => message.startsWith('snooze wake-up failed'))).to.have.length(1);
    });
  });
});
