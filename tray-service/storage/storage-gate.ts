import type { Logger } from '../../shared/logging/create-logger.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { withTimeout } from '../../shared/time/with-timeout.ts';

/**
 * Whether the worker may take jobs: open while the storage answers, shut while it does not. A job
 * that fails during an outage is not the job's fault, so it waits here and runs again in place
 * instead of spending one of its attempts (docs/operations.md#when-a-dependency-is-down).
 *
 * A storage that answers but takes no writes (read-only, a full disk) shuts it too, as `refused`
 * says; no ping can tell when writes pass again, so the jobs that met the refusal go on trying
 * (`whenOpen(true)` lets them by) and the first that writes opens it (`leftRefusal`).
 */
export interface StorageGate {
  /**
   * Resolves at once while open, otherwise once the storage answers again; never after stop()
   * during an outage (nothing probes any more).
   */
  whenOpen(probingRefusal?: boolean): Promise<void>;
  /**
   * Called after a job's write was refused while the storage answers: shuts the gate (unless an
   * outage already did) until a job writes. The job itself waits `waitMs` (never, after stop(),
   * when it parks like a job at a shut gate) and tries again, passing `whenOpen(true)`.
   */
  refused(waitMs: number): Promise<void>;
  /**
   * A job's wait after the storage said "not now" while it answers (a statement or lock timeout):
   * `waitMs`, cut short by stop(). After stop() the job parks like one at a shut gate, and the
   * shutdown stops waiting for it (parkedAfterStop) instead of for the rest of its waits.
   */
  busy(waitMs: number): Promise<void>;
  /**
   * Called when a job that met a refusal is done with it (it wrote, or failed for a reason of its
   * own): opens a gate a refusal shut, so that the jobs held there find out for themselves.
   */
  leftRefusal(): void;
  /**
   * Called after a job failed: asks the storage (one probe shared by every job failing at once)
   * and shuts the gate when it does not answer. True when the failure was the outage's.
   */
  isOutage(): Promise<boolean>;
  readonly isOpen: boolean;
  /**
   * Resolves when a job parks after stop() (an outage found then, or a busy wait cut short): the
   * jobs a shutdown waits for are then parked for good (nothing probes any more), and the shutdown
   * stops waiting for them.
   */
  readonly parkedAfterStop: Promise<void>;
  /**
   * How many jobs will not return: parked after stop(), and, once stopped, those held at a gate an
   * outage shut before it (nothing probes any more). The shutdown waits for the rest.
   */
  readonly parked: number;
  /**
   * Shutdown: no more probes. During an outage, jobs waiting at the gate stay where they are (active,
   * then stalled); with the storage answering, jobs still pass.
   */
  stop(): void;
}

export interface StorageGateOptions {
  /** Throws when the storage does not answer (the port's `ping`, as /readyz uses it). */
  ping: () => Promise<void>;
  logger: Logger;
  /** Called when the gate shuts (false) and opens again (true): the queue pauses and resumes locally. */
  onChange?: (open: boolean) => void;
  /** A probe that takes longer counts as no answer. */
  probeTimeoutMs?: number;
  /** Wait before the first probe of an outage; doubles per probe up to maxProbeMs. */
  firstProbeMs?: number;
  maxProbeMs?: number;
}

export function createStorageGate(options: StorageGateOptions): StorageGate {
  const probeTimeoutMs = options.probeTimeoutMs ?? 2_000;
  const firstProbeMs = options.firstProbeMs ?? 250;
  const maxProbeMs = options.maxProbeMs ?? 5_000;
  let stopped = false;
  // `refusal`: shut by a refused write, which no probe ends; a ping outage meanwhile turns it into one.
  let outage: { since: number; opened: Promise<undefined>; open: () => void; refusal: boolean } | undefined;
  let probing: Promise<boolean> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const parked = Promise.withResolvers<undefined>();
  let parkedJobs = 0;
  /** Jobs waiting at whenOpen for an outage to end. */
  let heldJobs = 0;
  /** The jobs' waits running now, ended by stop(): a set, not a race on one promise pending till stop. */
  const waits = new Set<() => void>();
  /** A job's wait of `waitMs`, over at once when stop() comes (or came). */
  const waitUnlessStopped = (waitMs: number) =>
    new Promise<void>((resolve) => {
      if (stopped) return resolve();
      const end = () => {
        clearTimeout(wait);
        waits.delete(end);
        resolve();
      };
      const wait = setTimeout(end, waitMs);
      waits.add(end);
    });
  /** Where a job waits after stop(): nothing will let it on (the process is going away). */
  const parkForGood = () => {
    parkedJobs += 1;
    parked.resolve(undefined);
    return new Promise<void>(() => undefined);
  };

  const answers = (): Promise<boolean> => {
    probing ??= withTimeout(options.ping(), probeTimeoutMs, 'storage ping').then(
      () => true,
      () => false,
    );
    const probe = probing;
    void probe.finally(() => {
      if (probing === probe) probing = undefined;
    });
    return probe;
  };

  const reopen = () => {
    if (!outage) return;
    const { since, open, refusal } = outage;
    outage = undefined;
    options.logger.info(
      { downForMs: Math.round(performance.now() - since) },
      refusal
        ? 'storage takes writes again: the worker takes jobs again'
        : 'storage answers again: the worker takes jobs again',
    );
    options.onChange?.(true);
    open();
  };

  // Backs off between probes, so a long outage costs a probe every maxProbeMs, not a busy loop.
  const probeLater = (waitMs: number) => {
    timer = setTimeout(() => {
      void answers().then((ok) => {
        if (stopped) return;
        if (ok) reopen();
        else probeLater(Math.min(waitMs * 2, maxProbeMs));
      });
    }, waitMs);
  };

  const shut = (refusal: boolean) => {
    if (outage) {
      // Refused writes, and now no answer at all: probed from here on like any outage.
      if (!refusal && outage.refusal && !stopped) {
        outage.refusal = false;
        options.logger.warn('storage does not answer: the worker waits for it (jobs wait in the queue)');
        probeLater(firstProbeMs);
      }
      return;
    }
    const { promise: opened, resolve: open } = Promise.withResolvers<undefined>();
    outage = { since: performance.now(), opened, open: () => open(undefined), refusal };
    // An outage found after stop() still parks its jobs (else they would retry in a busy loop),
    // but nothing probes or resumes the queue any more: the process is going away.
    if (stopped) {
      parked.resolve(undefined);
      return;
    }
    options.logger.warn(
      refusal
        ? 'storage answers but refuses writes (read-only or full): the worker takes no new jobs, and the ones it holds try again without spending attempts until a write passes'
        : 'storage does not answer: the worker takes no jobs until it does (jobs wait in the queue)',
    );
    options.onChange?.(false);
    if (!refusal) probeLater(firstProbeMs);
  };

  return {
    // Parks a job only during an outage: after stop() with the storage answering, bull still hands
    // out the jobs its waiting fetches bring, and queue.close() waits for them, so they must run.
    whenOpen(probingRefusal = false) {
      if (stopped && outage) return parkForGood();
      // A job probing a refusal passes: nothing else tells when writes pass again.
      if (!outage || (probingRefusal && outage.refusal)) return Promise.resolve();
      heldJobs += 1;
      return outage.opened.then(() => {
        heldJobs -= 1;
      });
    },
    async isOutage() {
      if (outage && !outage.refusal) return true;
      if (await answers()) return false;
      shut(false);
      return true;
    },
    async refused(waitMs) {
      shut(true);
      await waitUnlessStopped(waitMs);
      if (stopped) return parkForGood();
    },
    async busy(waitMs) {
      await waitUnlessStopped(waitMs);
      if (!stopped) return;
      return parkForGood();
    },
    leftRefusal() {
      if (outage?.refusal) reopen();
    },
    get isOpen() {
      return outage === undefined;
    },
    get parked() {
      return parkedJobs + (stopped && outage ? heldJobs : 0);
    },
    parkedAfterStop: parked.promise,
    stop() {
      stopped = true;
      clearTimeout(timer);
      for (const end of [...waits]) end();
    },
  };
}

/**
 * Closes a queue whose jobs wait at `gate` (a shutdown): waits for the jobs in flight, unless they
 * wait for the storage. Those stay active and are taken again as stalled jobs, which costs no
 * attempt (WEBHOOK_MAX_STALLED_COUNT stalls at most); so do jobs that meet an outage while it
 * waits (the database stopped with the rest of a stack) or wait out a storage that says "not now",
 * which would otherwise hold the close until the shutdown's deadline. `running`: the jobs in flight
 * (parked ones included, as they never end); the queue is cut once all the others are done, or
 * after RUNNING_WAIT_MS. Resolves once every job's handler that is not parked has settled, however
 * long after the cut (the shutdown's deadline bounds it): the shutdown closes Redis and the storage
 * next, and a job still writing then would store what it never announces to the live streams,
 * while its rerun, finding it stored, announces nothing either. `handlers`: the jobs whose handler
 * has not settled (parked ones included).
 */
export async function closeQueueAtGate(
  gate: StorageGate,
  queue: { close(doNotWaitJobs?: boolean): Promise<void>; disconnect(): Promise<void> },
  running: () => number,
  handlers: () => number,
): Promise<void> {
  const waiting = !gate.isOpen;
  gate.stop();
  let closed = false;
  await Promise.race([
    queue.close(waiting).finally(() => (closed = true)),
    gate.parkedAfterStop.then(async () => {
      // A job still running beside the parked ones would lose the connection it reports its end
      // on, and run again after the restart: waited for, a while (a decision's delivery takes up
      // to MODERATION_WEBHOOK_TIMEOUT_MS, 5 s by default; a statement to a server that vanished
      // fails only at the keepalive's 20 s, past the shutdown's deadline).
      const until = performance.now() + RUNNING_WAIT_MS;
      while (!closed && running() > gate.parked && performance.now() < until) await sleep(RUNNING_POLL_MS);
      // Its connections go (createBullQueue's disconnect): the parked jobs' locks lapse.
      if (!closed) await queue.disconnect();
    }),
  ]);
  while (handlers() > gate.parked) await sleep(RUNNING_POLL_MS);
}

/** How long a shutdown with parked jobs waits for the others, and how often it looks. */
const RUNNING_WAIT_MS = 5_000;
const RUNNING_POLL_MS = 20;
