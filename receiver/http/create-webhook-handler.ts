import { targetPath } from './webhook-path-matcher.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, type ErrorKind } from '../../shared/errors/app-error.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { requestIdOf } from '../../shared/http/request-id.ts';
import type { EncodedWebhookJob } from '../../shared/queue/webhook-queue.ts';
import { createDeliveryDecider, readBody, type DeliveryRules } from '../decision/create-delivery-decider.ts';
import { deliveryJob } from '../delivery-job.ts';
import type { ReceiverMetrics, RejectReason } from '../receiver-metrics.ts';
import type { Spool } from '../spool/open-spool.ts';
import { SPOOL_DEADLINE_MS } from '../spool/spool-deadline.ts';
import { SpoolFullError } from '../spool/spool-full-error.ts';
import type { EnqueueOutcome } from '../store/enqueue-once.ts';
import { readRawBody } from './read-raw-body.ts';
import { writeErrorReply } from './write-error-reply.ts';

export interface WebhookSettings extends DeliveryRules {
  maxBodyBytes: number;
}

export interface WebhookHandlerDeps {
  settings: WebhookSettings;
  /**
   * Dedupe check + bull add (enqueueMany, batched per turn); idempotent per event. Must settle
   * within the acknowledgement budget (wire-receiver.ts keeps WEBHOOK_ENQUEUE_TIMEOUT_MS per Redis
   * call): a rejection sends the event to the spool.
   */
  enqueue: (job: EncodedWebhookJob) => Promise<EnqueueOutcome>;
  spool: Spool;
  metrics: ReceiverMetrics;
  logger: Logger;
  /** helmet's headers (helmetHeaders()), sent with every answer. */
  securityHeaders: ReadonlyMap<string, string>;
  /**
   * The longest one enqueue can take by its own bounds (its budget and a batch's hold; 1.1 s, the
   * most configurable, unless given): a request with more time left needs no deadline of its own.
   */
  enqueueBoundMs?: number;
  now?: () => Date;
}

/**
 * Answers one request on the webhook path, whatever its outcome: it never rejects and needs no
 * framework after it (create-receiver-app.ts calls it before Express for `POST` on the path).
 */
export type WebhookHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

// A string, not a Buffer: Node then sends headers and body in one write instead of a writev.
const emptyObject = '{}';

/**
 * What the spool write is left of SPOOL_DEADLINE_MS at the least: the enqueue gets the rest (its
 * own budget, WEBHOOK_ENQUEUE_TIMEOUT_MS, at most 1 s, and a batch's hold of 100 ms, when that
 * is shorter), counted from the request's arrival, the body's upload included.
 */
const SPOOL_SHARE_MS = 500;
/** The most an enqueue can take by its own bounds (WEBHOOK_ENQUEUE_TIMEOUT_MS at most, and its hold). */
const ENQUEUE_BOUND_MS = 1_100;

/** At most one warn line per refusal reason in this time. */
const REFUSAL_LOG_EVERY_MS = 60_000;

/**
 * `work`'s outcome (its failure thrown), or 'late' once `deadline` (a performance.now() time) has
 * passed and `work` still runs.
 */
async function beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, deadline - performance.now()));
  });
  // Work that fails after the deadline was answered already: a spool write's failure is its
  // readiness's to report, an enqueue's is the drainer's duplicate-or-queued.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

const reasonOf: Partial<Record<ErrorKind, RejectReason>> = {
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  PAYLOAD_TOO_LARGE: 'too_large',
  BAD_REQUEST: 'bad_request',
};

/**
 * Where a delivery refused for its address came from: the connection's address and the
 * X-Forwarded-For it sent (cut to 200 characters), so the line names the address to allow (the
 * platform sending from a new range) or the header a proxy wrote wrongly (`ip:port` entries),
 * which the refusal's message cannot tell apart from a scanner's. Neither is a secret.
 */
function sourceOf(req: IncomingMessage): { remoteAddress?: string; forwardedFor?: string } {
  // Node joins repeated X-Forwarded-For lines into one string.
  const forwarded = req.headers['x-forwarded-for'];
  return {
    ...(req.socket.remoteAddress === undefined ? {} : { remoteAddress: req.socket.remoteAddress }),
    ...(typeof forwarded === 'string' ? { forwardedFor: forwarded.slice(0, 200) } : {}),
  };
}
/**
 * POST on the webhook path: the HTTP adapter of the receiver's decision
 * (decision/create-delivery-decider.ts), on Node's own request and response. It reads the body
 * between the decision's two halves, then dedupes and enqueues within the budget or spools, counts
 * every outcome by reason, and writes every answer itself: the acknowledgement, refusals in the
 * JSON error shape and an unexpected failure as a 500, each with helmet's headers.
 */
export function createWebhookHandler(deps: WebhookHandlerDeps): WebhookHandler {
  const enqueueBoundMs = deps.enqueueBoundMs ?? ENQUEUE_BOUND_MS;
  const { settings, metrics, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const decider = createDeliveryDecider(settings);
  let enqueueFailing = false;
  /** The spool refused the last event it was given (spool_unavailable, _late or _full). */
  let spoolRefusing = false;

  // The acknowledgement's bytes, written directly and in one call: express's json() would
  // stringify `{}` and run its send() negotiation, and a setHeader per header costs more than one
  // writeHead with a flat list, on every request of the hottest path (BENCHMARKS.md, "Receiver").
  // writeHead stores the headers at once, so the length must be in the list.
  const securityHeaders = [...deps.securityHeaders].flat();
  const okHeaders = [
    ...securityHeaders,
    'content-type',
    'application/json; charset=utf-8',
    'content-length',
    String(Buffer.byteLength(emptyObject)),
  ];
  const ackSeconds = boundByStatus(metrics.ackSeconds);
  const ackedSeconds = ackSeconds(200);
  // An answer's latency is taken when its bytes are handed to the socket, without a 'finish'
  // listener per request.
  const ok = (res: ServerResponse, started: number) => {
    res.writeHead(200, okHeaders);
    res.end(emptyObject);
    ackedSeconds.observe((performance.now() - started) / 1000);
  };
  // As the error middleware logs a 5xx: the cause, the id its answer carries, the method and the
  // path without its query.
  const logFailure = (req: IncomingMessage, err: unknown, message: string, requestId: string) => {
    // Never the authority of an absolute-form target, which may carry credentials.
    logger.error({ err, requestId, method: req.method, path: targetPath(req.url) }, message);
  };
  // A sender refused for its address or signature (a new egress range, a secret rotated on one side
  // only) is refused on every delivery until someone looks: the first refusal of each reason is
  // logged at warn, then at most one line a minute saying how many went unlogged in between.
  const refusalsLogged = new Map<RejectReason, { at: number; unlogged: number }>();
  const logRefusal = (reason: RejectReason, error: AppError, req: IncomingMessage) => {
    const at = now().getTime();
    const last = refusalsLogged.get(reason);
    if (last && at - last.at < REFUSAL_LOG_EVERY_MS) {
      last.unlogged += 1;
      logger.debug({ reason, status: error.status }, 'webhook refused');
      return;
    }
    refusalsLogged.set(reason, { at, unlogged: 0 });
    logger.warn(
      {
        reason,
        status: error.status,
        message: error.message,
        ...(reason === 'forbidden' ? sourceOf(req) : {}),
        ...(last ? { unlogged: last.unlogged } : {}),
      },
      'webhook refused (one line a minute per reason; webhook_rejected_total counts every one)',
    );
  };
  // Made once, not per request.
  const refuse = (
    req: IncomingMessage,
    res: ServerResponse,
    started: number,
    reason: RejectReason,
    error: AppError,
    /** The log line's message, or false for none: a 5xx is logged with its own by default. */
    log: string | false = error.status >= 500 ? error.message : false,
  ) => {
    metrics.rejected.inc({ reason });
    if (error.status < 500) logRefusal(reason, error, req);
    const requestId = error.status >= 500 ? requestIdOf(req.headers) : undefined;
    if (log !== false && requestId !== undefined) logFailure(req, error.cause ?? error, log, requestId);
    writeErrorReply(res, securityHeaders, error, requestId);
    ackSeconds(error.status).observe((performance.now() - started) / 1000);
  };
  const enqueueSeconds = {
    queued: metrics.enqueueSeconds.labels('queued'),
    duplicate: metrics.enqueueSeconds.labels('duplicate'),
    failed: metrics.enqueueSeconds.labels('failed'),
  };
  const acceptedIntoQueue = metrics.accepted.labels('queue');
  const acceptedIntoSpool = metrics.accepted.labels('spool');
  const droppedDuplicate = metrics.dropped.labels('duplicate');
  const droppedLegacy = metrics.dropped.labels('legacy');

  return async (req, res) => {
    const started = performance.now();
    try {
      metrics.received.inc();
      // 1-3. Source address, legacy duplicate, content type.
      const head = decider.screen(req);
      if (head !== readBody) {
        if (head.verdict === 'refuse')
          return refuse(req, res, started, head.reason, new AppError(head.kind, head.message));
        droppedLegacy.inc();
        return ok(res, started);
      }
      let rawBody: Buffer;
      try {
        rawBody = await readRawBody(req, res, settings.maxBodyBytes);
      } catch (error) {
        const appError =
          error instanceof AppError ? error : new AppError('BAD_REQUEST', 'request was aborted');
        return refuse(req, res, started, reasonOf[appError.kind] ?? 'bad_request', appError);
      }
      // 4-5. Signature, envelope.
      const body = decider.judge(rawBody, req.headers);
      if (body.verdict === 'refuse')
        return refuse(req, res, started, body.reason, new AppError(body.kind, body.message));

      // 6 + 7. Dedupe and enqueue within the budget, else the durable spool.
      const job = deliveryJob({
        dedupeKey: body.dedupeKey,
        webhook: body.webhook,
        scheme: body.scheme,
        receivedAt: now(),
        envelope: body.envelope,
      });
      const enqueueStarted = performance.now();
      let outcome: EnqueueOutcome | undefined;
      // Whether the enqueue ran to its own end: one given up for the answer's time, or not tried,
      // says nothing of Redis.
      let settled = false;
      try {
        // A body that took long to arrive leaves the enqueue only what is left of the answer's
        // time: with its whole budget, a Redis that hangs had the spool write start past the
        // deadline, and the event, kept, was answered 503. A call given up here may still land:
        // the drainer's add of the spooled event is then a duplicate.
        // With no time left at all, the event goes to the spool untried (and nothing is logged).
        const left = started + SPOOL_DEADLINE_MS - SPOOL_SHARE_MS - enqueueStarted;
        if (left > 0) {
          const enqueued =
            left >= enqueueBoundMs
              ? await deps.enqueue(job)
              : await beforeDeadline(deps.enqueue(job), enqueueStarted + left);
          if (enqueued !== 'late') {
            settled = true;
            outcome = enqueued;
            enqueueFailing = false;
            // A run of spool refusals ends when Redis takes events again too: the next one is logged.
            spoolRefusing = false;
          }
        }
      } catch (error) {
        settled = true;
        if (!enqueueFailing)
          logger.warn({ err: (error as Error).message }, 'enqueue failed; spooling events');
        enqueueFailing = true;
      }
      // An enqueue not tried or cut short (no time left) is no enqueue that failed: counted, it
      // would read as Redis failing whenever a sender is slow.
      if (settled) enqueueSeconds[outcome ?? 'failed'].observe((performance.now() - enqueueStarted) / 1000);
      if (outcome === 'duplicate') {
        droppedDuplicate.inc();
        return ok(res, started);
      }
      if (outcome === undefined) {
        let refusal: { reason: RejectReason; error: AppError } | undefined;
        try {
          if ((await beforeDeadline(deps.spool.append(job), started + SPOOL_DEADLINE_MS)) === 'late')
            refusal = {
              reason: 'spool_late',
              error: new AppError('UNAVAILABLE', 'the event could not be stored in time; retry later'),
            };
        } catch (error) {
          refusal = {
            reason: error instanceof SpoolFullError ? 'spool_full' : 'spool_unavailable',
            error: new AppError('UNAVAILABLE', 'the event could not be stored; retry later', {
              cause: error,
            }),
          };
        }
        if (refusal) {
          // A disk that fails or stalls refuses every request: logged once until it takes one again.
          const log =
            !spoolRefusing &&
            `${refusal.error.message} (${refusal.reason}; further refusals are counted, not logged, until the spool takes an event again)`;
          spoolRefusing = true;
          return refuse(req, res, started, refusal.reason, refusal.error, log);
        }
        if (spoolRefusing) logger.info('the spool takes events again');
        spoolRefusing = false;
      }
      (outcome === 'queued' ? acceptedIntoQueue : acceptedIntoSpool).inc();
      ok(res, started);
    } catch (error) {
      // A bug, not a refusal: answered as the error middleware answers any unexpected throw.
      const requestId = requestIdOf(req.headers);
      logFailure(req, error, 'internal error', requestId);
      metrics.rejected.inc({ reason: 'internal' });
      writeErrorReply(res, securityHeaders, new AppError('INTERNAL', 'internal error'), requestId);
      ackSeconds(500).observe((performance.now() - started) / 1000);
    }
  };
}

/** prom-client hashes a label object on every observe; a child per status code is hashed once. */
function boundByStatus(histogram: ReceiverMetrics['ackSeconds']) {
  const children = new Map<number, ReturnType<typeof histogram.labels>>();
  return (status: number) => {
    let child = children.get(status);
    if (!child) {
      child = histogram.labels(String(status));
      children.set(status, child);
    }
    return child;
  };
}
