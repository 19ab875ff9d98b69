import type { NextFunction, RequestHandler, Response } from 'express';
import { AppError, type ErrorKind } from '../../shared/errors/app-error.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { EncodedWebhookJob } from '../../shared/queue/webhook-queue.ts';
import { createDeliveryDecider, readBody, type DeliveryRules } from '../decision/create-delivery-decider.ts';
import { deliveryJob } from '../delivery-job.ts';
import type { ReceiverMetrics, RejectReason } from '../receiver-metrics.ts';
import type { Spool } from '../spool/open-spool.ts';
import type { EnqueueOutcome } from '../store/enqueue-once.ts';
import { readRawBody } from './read-raw-body.ts';

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
  /** helmet's headers (helmetHeaders()), sent with every acknowledgement. */
  securityHeaders: ReadonlyMap<string, string>;
  now?: () => Date;
}

// A string, not a Buffer: Node then sends headers and body in one write instead of a writev.
const emptyObject = '{}';

const reasonOf: Partial<Record<ErrorKind, RejectReason>> = {
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  PAYLOAD_TOO_LARGE: 'too_large',
  BAD_REQUEST: 'bad_request',
};

/**
 * POST on the webhook path: the Express adapter of the receiver's decision
 * (decision/create-delivery-decider.ts). It reads the body between the decision's two halves,
 * then dedupes and enqueues within the budget or spools, and counts every outcome by reason.
 */
export function createWebhookHandler(deps: WebhookHandlerDeps): RequestHandler {
  const { settings, metrics, logger, securityHeaders } = deps;
  const now = deps.now ?? (() => new Date());
  const decider = createDeliveryDecider(settings);
  let enqueueFailing = false;

  // The acknowledgement's bytes, written directly and in one call: express's json() would
  // stringify `{}` and run its send() negotiation, and a setHeader per header costs more than one
  // writeHead with a flat list, on every request of the hottest path (BENCHMARKS.md, "Receiver").
  // writeHead stores the headers at once, so the length must be in the list.
  const okHeaders = [
    ...[...securityHeaders].flat(),
    'content-type',
    'application/json; charset=utf-8',
    'content-length',
    String(Buffer.byteLength(emptyObject)),
  ];
  const ackSeconds = boundByStatus(metrics.ackSeconds);
  const ackedSeconds = ackSeconds(200);
  // An ack's latency is taken when its bytes are handed to the socket, without a 'finish' listener
  // per request; refusals, written later by the error middleware, are timed by 'finish'.
  const ok = (res: Response, started: number) => {
    res.writeHead(200, okHeaders);
    res.end(emptyObject);
    ackedSeconds.observe((performance.now() - started) / 1000);
  };
  // Made once, not per request: only refusals need the response and `next`.
  const refuse = (
    res: Response,
    next: NextFunction,
    started: number,
    reason: RejectReason,
    error: AppError,
  ) => {
    res.once('finish', () => {
      ackSeconds(res.statusCode).observe((performance.now() - started) / 1000);
    });
    metrics.rejected.inc({ reason });
    logger.debug({ reason, status: error.status }, 'webhook refused');
    next(error);
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

  return async (req, res, next) => {
    const started = performance.now();
    metrics.received.inc();
    // 1-3. Source address, legacy duplicate, content type.
    const head = decider.screen(req);
    if (head !== readBody) {
      if (head.verdict === 'refuse')
        return refuse(res, next, started, head.reason, new AppError(head.kind, head.message));
      droppedLegacy.inc();
      return ok(res, started);
    }
    let rawBody: Buffer;
    try {
      rawBody = await readRawBody(req, settings.maxBodyBytes);
    } catch (error) {
      const appError = error instanceof AppError ? error : new AppError('BAD_REQUEST', 'request was aborted');
      return refuse(res, next, started, reasonOf[appError.kind] ?? 'bad_request', appError);
    }
    // 4-5. Signature, envelope.
    const body = decider.judge(rawBody, req.headers);
    if (body.verdict === 'refuse')
      return refuse(res, next, started, body.reason, new AppError(body.kind, body.message));

    // 6 + 7. Dedupe and enqueue within the budget, else the durable spool.
    const job = deliveryJob({
      dedupeKey: body.dedupeKey,
      webhook: body.webhook,
      receivedAt: now(),
      envelope: body.envelope,
    });
    const enqueueStarted = performance.now();
    let outcome: EnqueueOutcome | undefined;
    try {
      outcome = await deps.enqueue(job);
      enqueueFailing = false;
    } catch (error) {
      if (!enqueueFailing) logger.warn({ err: (error as Error).message }, 'enqueue failed; spooling events');
      enqueueFailing = true;
    }
    enqueueSeconds[outcome ?? 'failed'].observe((performance.now() - enqueueStarted) / 1000);
    if (outcome === 'duplicate') {
      droppedDuplicate.inc();
      return ok(res, started);
    }
    if (outcome === undefined) {
      try {
        await deps.spool.append(job);
      } catch (error) {
        return refuse(
          res,
          next,
          started,
          'spool_unavailable',
          new AppError('UNAVAILABLE', 'the event could not be stored; retry later', { cause: error }),
        );
      }
    }
    (outcome === 'queued' ? acceptedIntoQueue : acceptedIntoSpool).inc();
    ok(res, started);
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
