import { firstOf } from '../../shared/async/first-of.ts';
import type { EventsFilter } from '../domain/events-filter.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { EventsPort } from '../storage/port.ts';
import { applyJob, type ApplyJobDeps, type JobDelivery } from './apply-job.ts';

/**
 * `lost`: said of a `running` replay whose progress has not been written for LOST_AFTER_MS, although
 * its process writes it every HEARTBEAT_MS even when no event finishes: that process stopped.
 */
export const replayStates = ['running', 'done', 'failed', 'lost'] as const;

/** Where a replay of many events stands; kept where every instance reads it (ReplayProgressStore). */
export interface ReplayProgress {
  id: string;
  state: (typeof replayStates)[number];
  filter: EventsFilter;
  /** Events that matched when it started. */
  total: number;
  /** Events replayed so far (applied again, or found already applied: the same thing). */
  done: number;
  /** Events whose replay threw (each is also logged by the caller's logger). */
  failed: number;
  /** Events left alone as they were about to expire (expiringSoon). */
  expired: number;
  startedAt: Date;
  /** Last progress written (at least every HEARTBEAT_MS while running). */
  updatedAt: Date;
  finishedAt?: Date;
}

export interface ReplayProgressStore {
  save(progress: ReplayProgress): Promise<void>;
  get(id: string): Promise<ReplayProgress | undefined>;
}

export interface ReplayDeps {
  events: Pick<EventsPort, 'get' | 'stream' | 'count'>;
  /** The worker's apply path (storage, retention, bans, moderation, live changes). */
  apply: ApplyJobDeps;
  progress: ReplayProgressStore;
  newId: () => string;
  /** Most events one replay of a filter may take (a narrower filter, or several, beyond that). */
  maxEvents: number;
  /** Replays of a filter running at once in this process at most (each writes to every tray it touches). */
  maxRunning?: number;
  /** Told of each event whose replay threw (and of a replay that could not go on: no event). */
  onError?: (error: unknown, event?: StoredEvent) => void;
  clock?: () => number;
  /** How often a running replay writes its progress even when no event finished (HEARTBEAT_MS). */
  heartbeatMs?: number;
  /** Between tries of a replay's last save (HEARTBEAT_MS); tried until LOST_AFTER_MS. */
  finalSaveRetryMs?: number;
}

/** A stored event as the queue delivered it: its key is the job's dedupe key, so it is stored once. */
export const deliveryOf = (event: StoredEvent): JobDelivery => ({
  dedupeKey: event.key,
  webhook: event.webhook,
  ...(event.status === 'foreign' ? { storedForeign: true } : {}),
  receivedAt: event.receivedAt.toISOString(),
  event: event.event,
  data: event.data,
});

/**
 * How close to its expiry a stored event is no longer replayed. Stored by a replay once expired (its
 * page read a moment before), it would be taken for a new event: kept a whole retention from then,
 * and counted, moderated and announced again as new. Far longer than one event's replay takes.
 */
export const REPLAY_EXPIRY_MARGIN_MS = 5 * 60_000;

/** Whether `event` expires too soon to replay, by the apply path's clock (the one its store reads). */
const expiringSoon = (event: StoredEvent, apply: ApplyJobDeps) =>
  event.expiresAt.getTime() <= (apply.now ?? Date.now)() + REPLAY_EXPIRY_MARGIN_MS;

/** Progress is written at most this often as events finish (and at the end). */
const SAVE_EVERY_MS = 500;
/** A running replay writes its progress at least this often, so a stopped one can be told. */
export const HEARTBEAT_MS = 5_000;
/** Six heartbeats missed: the replay's process stopped (a slow event still beats). */
export const LOST_AFTER_MS = 6 * HEARTBEAT_MS;

/**
 * Replays stored events into the tray through the worker's own apply path (applyJob), so a replay
 * is exactly a redelivery: every step is idempotent, and replaying an event twice, or one the
 * tray already holds, changes nothing (docs/operations.md#events-console-api). What it mends is a
 * tray that lost what it should hold (a restored backup, a fixed mapping).
 */
export function createReplays(deps: ReplayDeps) {
  const clock = deps.clock ?? Date.now;
  const maxRunning = deps.maxRunning ?? Number.POSITIVE_INFINITY;
  let running = 0;

  async function run(progress: ReplayProgress): Promise<void> {
    let saved = clock();
    // The beat shows the process alive while one event, or the read of the next, takes long.
    let writing = Promise.resolve();
    const beat = setInterval(() => {
      writing = writing
        .then(async () => {
          progress.updatedAt = new Date((saved = clock()));
          await deps.progress.save({ ...progress });
        })
        .catch((error: unknown) => deps.onError?.(error));
    }, deps.heartbeatMs ?? HEARTBEAT_MS);
    beat.unref();
    try {
      // Events stored after the count with an earlier receivedAt (a queue's backlog) join the
      // stream: the replay still ends at maxEvents, and its total grows with what it read.
      for await (const event of firstOf(deps.events.stream(progress.filter), deps.maxEvents)) {
        if (expiringSoon(event, deps.apply)) progress.expired += 1;
        else
          try {
            await applyJob(deliveryOf(event), deps.apply);
            progress.done += 1;
          } catch (error) {
            progress.failed += 1;
            deps.onError?.(error, event);
          }
        progress.total = Math.max(progress.total, progress.done + progress.failed + progress.expired);
        if (clock() - saved >= SAVE_EVERY_MS) {
          progress.updatedAt = new Date((saved = clock()));
          // A save that fails (Redis out for a moment) costs one report, not the replay: the
          // next save, or the heartbeat's, writes the progress again.
          await deps.progress.save({ ...progress }).catch((error: unknown) => deps.onError?.(error));
        }
      }
      progress.state = 'done';
    } catch (error) {
      // Reading the events failed (storage down): what was replayed stays replayed.
      progress.state = 'failed';
      deps.onError?.(error);
    } finally {
      clearInterval(beat);
      await writing;
    }
    progress.finishedAt = progress.updatedAt = new Date(clock());
    await saveFinal(progress);
  }

  /**
   * The last save, tried again for as long as a running replay would still be told running: one
   * that never lands leaves it `running` until it reads as `lost`, however it ended.
   */
  async function saveFinal(progress: ReplayProgress): Promise<void> {
    const retryMs = deps.finalSaveRetryMs ?? HEARTBEAT_MS;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await deps.progress.save(progress);
        return;
      } catch (error) {
        if (attempt * retryMs >= LOST_AFTER_MS) throw error;
        deps.onError?.(error);
        await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
    }
  }

  return {
    /**
     * Replays one event; undefined when no unexpired event has this key, 'expiring' when it expires
     * within REPLAY_EXPIRY_MARGIN_MS (left as it is).
     */
    async one(key: string): Promise<StoredEvent | undefined | 'expiring'> {
      const event = await deps.events.get(key);
      if (!event) return undefined;
      if (expiringSoon(event, deps.apply)) return 'expiring';
      return (await applyJob(deliveryOf(event), deps.apply)).event;
    },

    /**
     * Starts replaying every event of `filter` (newest first) and returns at once with its id;
     * `refused` with the number of matches when they are more than `maxEvents`, `busy` with the
     * number running when `maxRunning` already are.
     */
    async start(
      filter: EventsFilter,
    ): Promise<
      { id: string; total: number; finished: Promise<void> } | { refused: number } | { busy: number }
    > {
      if (running >= maxRunning) return { busy: running };
      // Held from here: two starts at once cannot both pass the check while they count.
      running += 1;
      let started = false;
      try {
        // One past the most says "too many" without counting the rest.
        const total = await deps.events.count(filter, undefined, deps.maxEvents + 1);
        if (total > deps.maxEvents) return { refused: total };
        const now = new Date(clock());
        const progress: ReplayProgress = {
          id: deps.newId(),
          state: 'running',
          filter,
          total,
          done: 0,
          failed: 0,
          expired: 0,
          startedAt: now,
          updatedAt: now,
        };
        await deps.progress.save(progress);
        // Never rejects: a replay's failure is its state (and the error goes to onError).
        const finished = run(progress)
          .catch((error: unknown) => deps.onError?.(error))
          .finally(() => (running -= 1));
        started = true;
        return { id: progress.id, total, finished };
      } finally {
        if (!started) running -= 1;
      }
    },

    /** Where a replay stands; a `running` one whose process stopped beating is `lost`. */
    async status(id: string): Promise<ReplayProgress | undefined> {
      const progress = await deps.progress.get(id);
      if (progress?.state !== 'running' || clock() - progress.updatedAt.getTime() <= LOST_AFTER_MS)
        return progress;
      return { ...progress, state: 'lost' };
    },
  };
}

export type Replays = ReturnType<typeof createReplays>;
