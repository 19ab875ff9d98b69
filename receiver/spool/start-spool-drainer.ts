import type { Logger } from '../../shared/logging/create-logger.ts';
import type { EncodedWebhookJob } from '../../shared/queue/webhook-queue.ts';
import type { EnqueueOutcome } from '../store/enqueue-once.ts';
import { withTimeout } from '../../shared/time/with-timeout.ts';
import type { Spool } from './open-spool.ts';

export interface SpoolDrainerDeps {
  spool: Spool;
  /** Must be idempotent per event (enqueueOnce: dedupe mark + job id). */
  enqueue: (job: EncodedWebhookJob) => Promise<EnqueueOutcome>;
  /**
   * Why an enqueue would fail now (the connection is down, a call is left unanswered, Redis refuses
   * writes), or undefined when it could succeed. A pass while it gives a reason is skipped: a pass
   * reads the oldest segment whole (up to 64 MiB, text split on the thread that answers the
   * webhooks) before its first enqueue, which would fail at once.
   */
  blocked?: () => string | undefined | Promise<string | undefined>;
  logger: Logger;
  /** How often to retry while events wait in the spool. */
  intervalMs?: number;
  /** Budget of one enqueue; a hung Redis must not hold the drainer (or shutdown) forever. */
  enqueueTimeoutMs?: number;
  onDrained?: (outcome: EnqueueOutcome) => void;
  /**
   * How often to take over the segments of receivers that stopped since (Spool.adoptOrphans;
   * default 30 s): a receiver stopped during a rolling restart leaves its events to those running.
   */
  adoptIntervalMs?: number;
  /**
   * The first pass waits for it (the receiver's check that Redis never evicts keys): the spool's
   * events must not go into a Redis the process is about to refuse. Settled either way, it starts.
   */
  startAfter?: Promise<unknown>;
}

export interface SpoolDrainer {
  /** Drains now (also what the timer does); resolves when this pass ends, successful or not. */
  runOnce(): Promise<void>;
  /**
   * Stops the timer and a running pass: the event in hand is given up if its add has not answered
   * yet, and it and the rest stay spooled for the next start, so a shutdown after a long outage, or
   * on a Redis that stopped answering, ends within its deadline. With `drainForMs`, a last pass
   * first moves what it can within that time (while Redis takes writes: `blocked` says not): a
   * receiver replaced rather than restarted (a pod's emptyDir, a scaled-in machine) leaves its spool
   * to no one else.
   */
  stop(drainForMs?: number): Promise<void>;
}

/**
 * Moves spooled events into the queue, oldest first: at start-up and then every `intervalMs` while
 * the spool is not empty (or holds a drained segment whose delete is to be retried), after taking
 * over, every `adoptIntervalMs`, what receivers that stopped left. A failed enqueue ends the pass;
 * the next pass resumes where it stopped.
 */
export function startSpoolDrainer(deps: SpoolDrainerDeps): SpoolDrainer {
  const intervalMs = deps.intervalMs ?? 1_000;
  const enqueueTimeoutMs = deps.enqueueTimeoutMs ?? 5_000;
  let failing = false;
  let stopped = false;
  /** stop() runs the last pass: no timer, no take-over of others' segments (this one is leaving). */
  let finishing = false;
  /** Whether `startAfter` settled: no pass, the last one at stop() included, comes before. */
  let checked = deps.startAfter === undefined;
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const adoptIntervalMs = deps.adoptIntervalMs ?? 30_000;
  // The spool took over what was left when it opened.
  let adoptedAt = performance.now();
  let adoptFailing = false;

  const adoptIfDue = async () => {
    if (performance.now() - adoptedAt < adoptIntervalMs) return;
    adoptedAt = performance.now();
    try {
      const events = await deps.spool.adoptOrphans();
      if (events > 0)
        deps.logger.info(
          { events, depth: deps.spool.depth() },
          'took over the spooled events of a stopped receiver',
        );
      adoptFailing = false;
    } catch (error) {
      if (!adoptFailing)
        deps.logger.warn({ err: (error as Error).message }, 'spool take-over failed; retried');
      adoptFailing = true;
    }
  };

  const pass = async () => {
    if (stopped) return;
    if (!finishing) await adoptIfDue();
    if (stopped || !deps.spool.hasWork()) return;
    let blocked: string | undefined;
    try {
      // Given up at stop(), as an enqueue is: a probe on a hung Redis does not hold a shutdown.
      blocked = await untilStopped(Promise.resolve(deps.blocked?.()), stopping.signal);
    } catch (error) {
      if (stopping.signal.aborted) return;
      blocked = (error as Error).message;
    }
    if (blocked !== undefined) {
      // Logged once per outage, as a failed pass is.
      if (!failing) deps.logger.warn({ err: blocked, depth: deps.spool.depth() }, 'spool drain paused');
      failing = true;
      return;
    }
    if (stopping.signal.aborted) return;
    try {
      const moved = await deps.spool.drain(async (job) => {
        // Not `onDrained?.(await ...)`: optional chaining would skip evaluating the argument.
        // Given up at stop(): the event stays spooled (its add, if it lands, makes the next
        // start's a duplicate), so a shutdown does not wait out the budget on a hung Redis.
        const outcome = await untilStopped(withTimeout(deps.enqueue(job), enqueueTimeoutMs), stopping.signal);
        deps.onDrained?.(outcome);
      }, stopping.signal);
      const depth = deps.spool.depth();
      if (stopping.signal.aborted && depth > 0)
        deps.logger.info({ moved, depth }, 'spool drain stopped; the rest drains at the next start');
      else if (failing || moved > 0) deps.logger.info({ moved, depth }, 'spool drained');
      failing = false;
    } catch (error) {
      if (stopping.signal.aborted) {
        deps.logger.info(
          { depth: deps.spool.depth() },
          'spool drain stopped; the rest drains at the next start',
        );
        return;
      }
      // Logged once per outage, not once per second.
      if (!failing) {
        deps.logger.warn({ err: (error as Error).message, depth: deps.spool.depth() }, 'spool drain paused');
      }
      failing = true;
    }
  };

  const runOnce = () => {
    running ??= pass().finally(() => {
      running = undefined;
    });
    return running;
  };

  const schedule = () => {
    if (stopped || finishing) return;
    timer = setTimeout(() => void runOnce().then(schedule), intervalMs);
  };
  void (deps.startAfter ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => {
      checked = true;
      if (!stopped) void runOnce().then(schedule);
    });

  return {
    runOnce,
    async stop(drainForMs = 0) {
      finishing = true;
      clearTimeout(timer);
      if (drainForMs > 0 && !stopped && checked) {
        // The pass under way, then one more for what arrived meanwhile; cut at the time given.
        const cut = setTimeout(() => stopping.abort(), drainForMs);
        try {
          await running;
          if (!stopping.signal.aborted && deps.spool.hasWork()) await runOnce();
        } finally {
          clearTimeout(cut);
        }
      }
      stopped = true;
      stopping.abort();
      await running;
    },
  };
}

/** `work`'s outcome, or a rejection as soon as `signal` aborts (the drainer's stop). */
function untilStopped<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('the drainer stopped'));
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(new Error('the drainer stopped'));
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
