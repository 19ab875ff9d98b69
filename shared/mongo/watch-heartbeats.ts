import type { MongoClient, ServerHeartbeatStartedEvent } from 'mongodb';
import { HeartbeatLedger } from './heartbeat-ledger.ts';

export interface HeartbeatWatch {
  stop(): void;
  /** True once stopped, by stop() or by the client being closed on purpose. */
  readonly stopped: boolean;
}

/**
 * Calls `onStuck` when one of the client's server heartbeats has neither succeeded nor failed
 * within `stuckAfterMs`, then watches afresh. Stops by itself when the client is closed on purpose
 * (any `topologyClosed` outside a running `onStuck`).
 *
 * Why: in driver 7.9 a heartbeat that starts on a monitoring connection whose socket is already
 * destroyed, but whose 'close' has not been emitted yet, waits for a 'drain' that never comes.
 * That server's monitor then never checks again, so after the next network error the server stays
 * Unknown and every operation fails server selection with the old error, until the process
 * restarts. Seen when the database restarted under load (RELIABILITY.md); reproduced in
 * test/shared/mongo/watch-heartbeats.test.ts.
 */
export function watchHeartbeats(
  client: MongoClient,
  options: { stuckAfterMs: number; checkEveryMs?: number; onStuck: (addresses: string[]) => Promise<void> },
): HeartbeatWatch {
  const ledger = new HeartbeatLedger();
  let recovering = false;
  let stopped = false;
  const onStarted = (event: ServerHeartbeatStartedEvent) => ledger.started(event.connectionId, Date.now());
  const onEnded = (event: { connectionId: string }) => ledger.ended(event.connectionId);
  const stop = () => {
    stopped = true;
    clearInterval(timer);
    client.off('serverHeartbeatStarted', onStarted);
    client.off('serverHeartbeatSucceeded', onEnded);
    client.off('serverHeartbeatFailed', onEnded);
    client.off('topologyClosed', onClosed);
  };
  const onClosed = () => {
    if (!recovering) stop();
  };
  const timer = setInterval(() => {
    if (recovering || stopped) return;
    const stuck = ledger.stuck(Date.now(), options.stuckAfterMs);
    if (stuck.length === 0) return;
    recovering = true;
    ledger.clear();
    options
      .onStuck(stuck)
      .catch(() => undefined)
      .finally(() => {
        recovering = false;
      });
  }, options.checkEveryMs ?? 1_000);
  // The watch must not keep a finished script alive.
  timer.unref();
  client.on('serverHeartbeatStarted', onStarted);
  client.on('serverHeartbeatSucceeded', onEnded);
  client.on('serverHeartbeatFailed', onEnded);
  client.on('topologyClosed', onClosed);
  return {
    stop,
    get stopped() {
      return stopped;
    },
  };
}
