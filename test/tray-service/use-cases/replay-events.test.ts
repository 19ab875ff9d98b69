import { expect } from 'chai';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';
import type { ApplyJobDeps } from '../../../tray-service/use-cases/apply-job.ts';
import {
  createReplays,
  LOST_AFTER_MS,
  type ReplayDeps,
  type ReplayProgress,
  type ReplayProgressStore,
} from '../../../tray-service/use-cases/replay-events.ts';

/** Progress kept in memory: what each save wrote, in order. */
function memoryProgress(): ReplayProgressStore & { saves: ReplayProgress[] } {
  const kept = new Map<string, ReplayProgress>();
  const saves: ReplayProgress[] = [];
  return {
    saves,
    async save(progress) {
      saves.push({ ...progress });
      kept.set(progress.id, { ...progress });
    },
    async get(id) {
      return kept.get(id);
    },
  };
}

/** Events whose read of the first takes `ms` and finds none: a replay busy without finishing one. */
function slowEvents(ms: number): ReplayDeps['events'] {
  return {
    get: async () => undefined,
    count: async () => 0,
    stream: (): AsyncIterable<StoredEvent> => ({
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          await new Promise((resolve) => setTimeout(resolve, ms));
          return { done: true, value: undefined };
        },
      }),
    }),
  };
}

const replaysWith = (progress: ReplayProgressStore, extra: Partial<ReplayDeps>) =>
  createReplays({
    events: slowEvents(0),
    // Never reached: no event is read in these cases.
    apply: {} as ApplyJobDeps,
    progress,
    newId: () => 'replay-1',
    maxEvents: 10,
    ...extra,
  });

describe('use-cases/replay-events: a replay whose process stopped', () => {
  it('writes its progress while one read or event takes long, not only when an event finishes', async () => {
    const progress = memoryProgress();
    const replays = replaysWith(progress, { events: slowEvents(250), heartbeatMs: 40 });
    const started = await replays.start({});
    if (!('finished' in started)) throw new Error('refused');
    await started.finished;
    const running = progress.saves.filter((saved) => saved.state === 'running');
    // The first save, then a beat every 40 ms of the 250 ms read.
    expect(running.length).to.be.at.least(4);
    expect(progress.saves.at(-1)).to.include({ state: 'done', done: 0, total: 0 });
  });

  it('is told as lost once its progress stopped moving for LOST_AFTER_MS, and running before', async () => {
    const progress = memoryProgress();
    const updatedAt = new Date('2026-11-25T12:00:00Z');
    const stopped: ReplayProgress = {
      id: 'replay-1',
      state: 'running',
      filter: {},
      total: 5,
      done: 2,
      failed: 0,
      expired: 0,
      startedAt: updatedAt,
      updatedAt,
    };
    await progress.save(stopped);
    let now = updatedAt.getTime() + LOST_AFTER_MS;
    const replays = replaysWith(progress, { clock: () => now });
    expect(await replays.status('replay-1')).to.include({ state: 'running', done: 2 });
    now += 1;
    expect(await replays.status('replay-1')).to.include({ state: 'lost', done: 2, total: 5 });
    // A finished replay stays as it ended, however old.
    await progress.save({ ...stopped, state: 'done', done: 5, finishedAt: updatedAt });
    expect(await replays.status('replay-1')).to.include({ state: 'done' });
    expect(await replays.status('unknown')).to.equal(undefined);
  });
});

/** `count` stored events of one filter, read in order; `extra` more join the stream after the count. */
function storedEvents(count: number, extra = 0): ReplayDeps['events'] {
  const at = new Date('2026-11-25T12:00:00Z');
  const events: StoredEvent[] = Array.from({ length: count + extra }, (_, n) => ({
    key: `e-${n}`,
    event: 'post.didCreate',
    data: {},
    webhook: 'default',
    receivedAt: at,
    storedAt: at,
    expiresAt: new Date(Date.now() + 86_400_000),
    status: 'applied',
  }));
  return {
    get: async () => undefined,
    count: async () => count,
    stream: async function* () {
      yield* events;
    },
  };
}

describe('use-cases/replay-events: saving progress fails', () => {
  // Every call of the clock is 600 ms later: each event is followed by a save (SAVE_EVERY_MS).
  const ticking = () => {
    let now = Date.parse('2026-11-25T12:00:00Z');
    return () => (now += 600);
  };

  it('replays every event when a save of its progress fails on the way, and ends done', async () => {
    const progress = memoryProgress();
    let calls = 0;
    const flaky: ReplayProgressStore = {
      save: async (saved) => {
        calls += 1;
        // The first save (the start) lands; the second, after the first event, fails.
        if (calls === 2) throw new Error('Redis connection lost');
        await progress.save(saved);
      },
      get: (id) => progress.get(id),
    };
    const errors: unknown[] = [];
    const replays = replaysWith(flaky, {
      events: storedEvents(3),
      clock: ticking(),
      onError: (error) => errors.push(error),
    });
    const started = await replays.start({});
    if (!('finished' in started)) throw new Error('refused');
    await started.finished;
    // The events fail to apply here (no storage behind apply): what counts is that all were read.
    expect(progress.saves.at(-1)).to.include({ state: 'done', total: 3 });
    expect(progress.saves.at(-1)!.done + progress.saves.at(-1)!.failed).to.equal(3);
    expect(errors.map((error) => (error as Error).message)).to.include('Redis connection lost');
  });

  it('tries its last save again, so a replay that ended is not left running', async () => {
    const progress = memoryProgress();
    let failedFinal = false;
    const flaky: ReplayProgressStore = {
      save: async (saved) => {
        if (saved.state === 'done' && !failedFinal) {
          failedFinal = true;
          throw new Error('Redis connection lost');
        }
        await progress.save(saved);
      },
      get: (id) => progress.get(id),
    };
    const replays = replaysWith(flaky, { events: storedEvents(0), finalSaveRetryMs: 10 });
    const started = await replays.start({});
    if (!('finished' in started)) throw new Error('refused');
    await started.finished;
    expect(failedFinal).to.equal(true);
    expect((await progress.get('replay-1'))?.state).to.equal('done');
  });
});

describe('use-cases/replay-events: events stored after the count', () => {
  it('stops at maxEvents, and its total is what it read', async () => {
    const progress = memoryProgress();
    const replays = replaysWith(progress, { events: storedEvents(2, 3), maxEvents: 3 });
    const started = await replays.start({});
    if (!('finished' in started)) throw new Error('refused');
    expect(started.total).to.equal(2);
    await started.finished;
    const last = progress.saves.at(-1)!;
    expect(last.done + last.failed).to.equal(3);
    expect(last).to.include({ state: 'done', total: 3 });
  });
});
