import type { RequestHandler } from 'express';
import type { Socket } from 'node:net';
import { AppError, type ErrorKind } from '../../shared/errors/app-error.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { EncodedWebhookJob } from '../../shared/queue/webhook-queue.ts';
import { clientAddress } from '../address/client-address.ts';
import type { Cidr } from '../address/parse-cidr.ts';
import type { TrustProxy } from '../address/parse-trust-proxy.ts';
import { isAllowed } from '../allowlist/is-allowed.ts';
import { dedupeKey } from '../dedupe-key.ts';
import { deliveryJob } from '../delivery-job.ts';
import { validateEnvelope } from '../envelope/validate-envelope.ts';
import type { ReceiverMetrics, RejectReason } from '../receiver-metrics.ts';
import type { WebhookSecret } from '../signature/parse-webhook-secrets.ts';
import { verifySignature } from '../signature/verify-signature.ts';
import type { Spool } from '../spool/open-spool.ts';
import type { EnqueueOutcome } from '../store/enqueue-once.ts';
import { headerLines } from './header-lines.ts';
import { isJsonContentType } from './is-json-content-type.ts';
import { readRawBody } from './read-raw-body.ts';

export interface WebhookSettings {
  /** Undefined when WEBHOOK_ALLOWLIST=off (local development only). */
  allowlist: readonly Cidr[] | undefined;
  trustProxy: TrustProxy;
  secrets: readonly WebhookSecret[];
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
 * POST on the webhook path. The checks run in the order fixed by DESIGN.md ("Data flow") and the
 * README ("Receiver"); each refusal is counted by reason. Error messages never echo a header or
 * the body, so neither a signature nor a secret can come back in a response or a log line.
 */
export function createWebhookHandler(deps: WebhookHandlerDeps): RequestHandler {
  const { settings, metrics, logger, securityHeaders } = deps;
  const now = deps.now ?? (() => new Date());
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
  const allowed = allowedSource(settings);
  const ackSeconds = boundByStatus(metrics.ackSeconds);
  const ackedSeconds = ackSeconds(200);
  // An ack's latency is taken when its bytes are handed to the socket, without a 'finish' listener
  // per request; refusals, written later by the error middleware, are timed by 'finish'.
  const ok = (res: Parameters<RequestHandler>[1], started: number) => {
    res.writeHead(200, okHeaders);
    res.end(emptyObject);
    ackedSeconds.observe((performance.now() - started) / 1000);
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
    const reject = (reason: RejectReason, error: AppError) => {
      res.once('finish', () => {
        ackSeconds(res.statusCode).observe((performance.now() - started) / 1000);
      });
      metrics.rejected.inc({ reason });
      logger.debug({ reason, status: error.status }, 'webhook refused');
      next(error);
    };

    // 1. Source address (platform document, section 5.10).
    if (!allowed(req.socket, req.headers['x-forwarded-for'])) {
      return reject('forbidden', new AppError('FORBIDDEN', 'source address is not allowed'));
    }
    // 2. The legacy duplicate (section 5.9): acknowledged, never queued.
    if (req.headers['x-legacy-signature'] !== undefined) {
      droppedLegacy.inc();
      return ok(res, started);
    }
    // 3. JSON only, size-limited while streaming. Node keeps only the first of repeated
    // Content-Type lines; two of them are ambiguous (a proxy may have read the other), so refused.
    const contentTypes = headerLines(req.rawHeaders, 'content-type');
    if (contentTypes.length !== 1 || !isJsonContentType(contentTypes[0])) {
      return reject(
        'unsupported_media_type',
        new AppError('UNSUPPORTED_MEDIA_TYPE', 'content type must be application/json'),
      );
    }
    let rawBody: Buffer;
    try {
      rawBody = await readRawBody(req, settings.maxBodyBytes);
    } catch (error) {
      const appError = error instanceof AppError ? error : new AppError('BAD_REQUEST', 'request was aborted');
      return reject(reasonOf[appError.kind] ?? 'bad_request', appError);
    }
    // 4. Signature over the exact bytes (section 5.8).
    const signature = verifySignature(rawBody, req.headers['x-service-signature'], settings.secrets);
    if (!signature.ok) {
      const message =
        signature.reason === 'missing'
          ? 'x-service-signature is missing'
          : 'x-service-signature is not valid';
      return reject('bad_signature', new AppError('UNAUTHORIZED', message));
    }
    // 5. Envelope (section 2.6).
    const envelope = validateEnvelope(rawBody);
    if (!envelope.ok) return reject('bad_envelope', new AppError('BAD_REQUEST', envelope.message));

    // 6 + 7. Dedupe and enqueue within the budget, else the durable spool.
    const job = deliveryJob({
      dedupeKey: dedupeKey(rawBody),
      webhook: signature.webhook,
      receivedAt: now(),
      envelope: envelope.envelope,
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
        return reject(
          'spool_unavailable',
          new AppError('UNAVAILABLE', 'the event could not be stored; retry later', { cause: error }),
        );
      }
    }
    (outcome === 'queued' ? acceptedIntoQueue : acceptedIntoSpool).inc();
    ok(res, started);
  };
}

/**
 * The allowlist decision for a request. Without trusted proxies it depends on the socket's address
 * alone, which never changes, so it is taken once per connection: a platform delivering over a
 * kept-alive connection skips parsing and matching the address on every later request.
 */
function allowedSource(
  settings: WebhookSettings,
): (socket: Socket, forwardedFor: string | readonly string[] | undefined) => boolean {
  const { allowlist, trustProxy } = settings;
  if (!allowlist) return () => true;
  const decide = (socket: Socket, forwardedFor: string | readonly string[] | undefined) => {
    const client = clientAddress(socket.remoteAddress, forwardedFor, trustProxy);
    return client.ok && isAllowed(allowlist, client.address);
  };
  if (trustProxy.kind !== 'none') return decide;
  const bySocket = new WeakMap<Socket, boolean>();
  return (socket) => {
    let decision = bySocket.get(socket);
    if (decision === undefined) {
      decision = decide(socket, undefined);
      bySocket.set(socket, decision);
    }
    return decision;
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
