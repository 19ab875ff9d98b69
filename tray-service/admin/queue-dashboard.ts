import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type Bull from 'bull';
import { Router, type RequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { isCrossOrigin } from './is-cross-origin.ts';
import { retryWithFreshAttempts } from '../../shared/queue/retry-with-fresh-attempts.ts';
import { WEBHOOK_QUEUE_NAME } from '../../shared/queue/webhook-queue.ts';

export interface QueueDashboardDeps {
  queues: readonly Bull.Queue[];
  /** Full path the dashboard is served at (its pages link to it), e.g. /admin/queues. */
  basePath: string;
  /**
   * The admin check in front of every dashboard request (requireAdminPage without the CSRF header,
   * which bull-board's page cannot send): a browser without a session goes to the sign-in form.
   */
  guard: RequestHandler;
  /** Where the dashboard's `Sign out` link leads (the admin listener's sign-out page). */
  signOutPath: string;
  /** QUEUE_DASHBOARD_WRITE: false (the default) leaves the dashboard read-only. */
  write?: boolean;
}

/** A pattern matching `word` in any case, as Express routes path words. */
const anyCase = (word: string) =>
  [...word]
    .map((c) => (c.toLowerCase() === c.toUpperCase() ? `\\${c}` : `[${c.toLowerCase()}${c.toUpperCase()}]`))
    .join('');

/**
 * The changing calls the dashboard may make with QUEUE_DASHBOARD_WRITE=on: those that cannot lose a
 * webhook the receiver acknowledged and the worker has not processed yet (waiting, paused, delayed
 * or active), nor the webhook queue's dead letter: an event the receiver acknowledged whose job
 * may have failed before the event was stored (then nothing else holds it, and the platform's
 * redelivery meets its dedupe mark; `npm run replay -- failed` sends them again instead; the
 * decisions queue's failed jobs are decisions, which storage keeps). Allowed: clean completed
 * jobs, and the decisions queue's failed ones; retry failed jobs, all or one; promote
 * delayed jobs, all or one; pause and resume one queue or all. Everything else is refused: clean of
 * any other state and removing one job (bull deletes a job whatever its state, as `empty` does),
 * adding a job or editing its data (such a job would reach the worker without the receiver's
 * signature check), retrying completed jobs (bull 4 cannot), and whatever a newer bull-board adds.
 * Route words are compared case-insensitively, as Express routes them; the status is compared
 * exactly, as bull-board hands it to bull.
 */
const NAMED_WRITES = [
  /^\/api\/queues\/(?:pause|resume)\/?$/i,
  /^\/api\/queues\/[^/]+\/(?:promote|pause|resume)\/?$/i,
  /^\/api\/queues\/[^/]+\/[Cc][Ll][Ee][Aa][Nn]\/completed\/?$/,
  // Failed jobs of any queue but the webhook queue: its failed set is the dead letter (below).
  new RegExp(`^/api/queues/(?!${anyCase(WEBHOOK_QUEUE_NAME)}/)[^/]+/[Cc][Ll][Ee][Aa][Nn]/failed/?$`),
  /^\/api\/queues\/[^/]+\/[Rr][Ee][Tt][Rr][Yy]\/failed\/?$/,
  // One job, by id. bull-board routes .../clean/<x> and .../retry/<x> to the whole-queue calls
  // above, whatever <x> is: a job id of `clean` or `retry` never reaches the one-job routes.
  /^\/api\/queues\/[^/]+\/(?!(?:clean|retry)\/)[^/]+\/(?:retry|promote)\/?$/i,
];
/** True for a PUT of one of the named write actions. */
export function isNamedWrite(method: string, path: string): boolean {
  return method === 'PUT' && NAMED_WRITES.some((pattern) => pattern.test(path));
}

const READS = new Set(['GET', 'HEAD']);

/** Refuses bull-board's changing calls unless QUEUE_DASHBOARD_WRITE=on, and any but the named ones always. */
function writeGate(write: boolean): RequestHandler {
  return (req, _res, next) => {
    if (READS.has(req.method)) return next();
    // bull-board's page cannot send the CSRF header: its changing calls must at least come from
    // this origin (the cookie is SameSite=Strict too).
    if (isCrossOrigin(req)) return next(new AppError('FORBIDDEN', 'cross-origin request refused'));
    if (!write) {
      return next(new AppError('FORBIDDEN', 'the queue dashboard is read-only (QUEUE_DASHBOARD_WRITE=off)'));
    }
    if (!isNamedWrite(req.method, req.path)) {
      return next(
        new AppError(
          'FORBIDDEN',
          'the queue dashboard may only clean completed jobs (and failed decisions), retry failed ones, promote delayed ones, pause and resume: it never drops a webhook not processed yet or dead-lettered, and jobs enter the queue through the receiver only',
        ),
      );
    }
    next();
  };
}

/** The most jobs one dashboard page reads (bull-board's `jobsPerPage`, which it does not bound). */
export const MAX_JOBS_PER_PAGE = 100;

/**
 * Lowers a page's `jobsPerPage` to MAX_JOBS_PER_PAGE. bull-board reads that many jobs, each whole
 * (payload, stack traces), into the process that also serves the tray API, and the failed set and
 * the backlog are largest when operators look: one request could run the process out of memory.
 * Lowered, not refused: the dashboard's own settings may ask for more, and a shorter page works.
 */
const boundPage: RequestHandler = (req, _res, next) => {
  const at = req.url.indexOf('?');
  if (at >= 0) {
    const query = new URLSearchParams(req.url.slice(at + 1));
    const asked = query.get('jobsPerPage');
    if (asked !== null && !(Number(asked) <= MAX_JOBS_PER_PAGE)) {
      query.set('jobsPerPage', String(MAX_JOBS_PER_PAGE));
      req.url = `${req.url.slice(0, at)}?${query.toString()}`;
    }
  }
  next();
};

/**
 * bull's getWorkers waits for its connection to be ready, adding listeners to it on every call: a
 * dashboard open while Redis is down (it asks on every poll) piled them up until Redis came back.
 * Not ready, the workers are unknown now: bull-board shows none, as for any failed ask.
 */
class ReadyOnlyWorkersAdapter extends BullAdapter {
  override async getWorkers(): ReturnType<BullAdapter['getWorkers']> {
    if (this.queue.client.status !== 'ready') throw new Error('the queue’s Redis connection is not ready');
    return super.getWorkers();
  }

  // A retry from the dashboard is the replay tool's (retryWithFreshAttempts): bull's own left the
  // job's last attempt spent, so a failure, even a passing one, sent it straight back with no backoff.
  override async getJob(id: string): ReturnType<BullAdapter['getJob']> {
    const job = await super.getJob(id);
    return job && this.freshRetry(job);
  }

  override async getJobs(...args: Parameters<BullAdapter['getJobs']>): ReturnType<BullAdapter['getJobs']> {
    return (await super.getJobs(...args)).map((job) => this.freshRetry(job));
  }

  private freshRetry<J extends { retry(...args: never[]): Promise<void> }>(job: J): J {
    const retry = job.retry.bind(job) as () => Promise<void>;
    const queue = this.queue;
    return Object.assign(job, {
      retry: () => retryWithFreshAttempts(queue, { id: (job as unknown as Bull.Job).id, retry }),
    });
  }
}

/** @bull-board at `basePath`, behind admin auth; read-only unless `write`. */
export function createQueueDashboard(deps: QueueDashboardDeps): Router {
  const write = deps.write ?? false;
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(deps.basePath);
  createBullBoard({
    // bull-board hides and refuses its own changing actions in read-only mode; writeGate refuses
    // them again here, whatever a bull-board version does.
    queues: deps.queues.map((queue) => new ReadyOnlyWorkersAdapter(queue, { readOnlyMode: !write })),
    serverAdapter,
    options: { uiConfig: { miscLinks: [{ text: 'Sign out', url: deps.signOutPath }] } },
  });
  const router = Router();
  router.use(deps.guard);
  router.use(writeGate(write));
  router.use(boundPage);
  router.use(serverAdapter.getRouter() as Router);
  return router;
}
