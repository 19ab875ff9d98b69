import type { Logger } from '../../shared/logging/create-logger.ts';
import type { TrayStorage } from '../storage/port.ts';
import type { TrayChanges } from '../use-cases/tray-changes.ts';
import { wakeSnoozed } from '../use-cases/wake-snoozed.ts';

export interface SnoozeWakeLoopOptions {
  storage: Pick<TrayStorage, 'inbox'>;
  /** Where woken records are announced (the live streams' publisher). */
  changes?: Pick<TrayChanges, 'recordsWritten'>;
  logger: Logger;
  /** TRAY_WAKE_INTERVAL_MS: the pause between two rounds. */
  intervalMs: number;
  /** Records claimed per storage call; a full batch is followed by the next at once. */
  batch?: number;
  /** Epoch ms; tests pin it. */
  now?: () => number;
}

export interface SnoozeWakeLoop {
  /**
   * Shutdown: no new round starts; resolves once the round under way (if any) has ended and
   * announced what it woke, however long that takes (the process's shutdown has a deadline of its
   * own): the shutdown closes Redis and the storage next, and records woken after that would reach
   * no stream, and be due no more.
   */
  stop(): Promise<void>;
}

/** Records claimed per storage call unless told (the benchmark's baseline claims as many). */
export const WAKE_BATCH = 500;

/**
 * The wake-up of ended snoozes, one loop per tray process (docs/tray-rules.md#inbox). Each round
 * asks the storage for the records due by now (an indexed query, so nothing is held in memory per
 * record and a restart loses nothing), until a batch comes back short; then it pauses
 * `intervalMs`. A record so reaches its user's streams within about intervalMs of its `until`.
 * Several processes may run it on one database: the storage claims each record for one of them.
 * A failing storage is logged once when the failures start and once when they end, never per round.
 */
export function startSnoozeWakeLoop(options: SnoozeWakeLoopOptions): SnoozeWakeLoop {
  const { storage, changes, logger, intervalMs } = options;
  const batch = options.batch ?? WAKE_BATCH;
  const now = options.now ?? Date.now;
  let stopped = false;
  let failingSince: number | undefined;
  let wakeUp: (() => void) | undefined;

  const round = async () => {
    try {
      let woken = batch;
      while (!stopped && woken === batch) woken = await wakeSnoozed(storage, changes, now(), batch);
      if (failingSince !== undefined) {
        logger.info(
          { downForMs: Math.round(performance.now() - failingSince) },
          'snooze wake-up works again',
        );
        failingSince = undefined;
      }
    } catch (error) {
      if (failingSince === undefined) {
        failingSince = performance.now();
        logger.warn(
          { err: (error as Error).message },
          'snooze wake-up failed: snoozed records stay out of the inbox until it works again (it retries each round)',
        );
      }
    }
  };

  const pause = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, intervalMs);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const running = (async () => {
    while (!stopped) {
      await round();
      if (!stopped) await pause();
    }
  })();

  return {
    async stop() {
      stopped = true;
      wakeUp?.();
      await running;
    },
  };
}
