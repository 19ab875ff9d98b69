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
