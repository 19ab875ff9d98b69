import type { RequestHandler } from 'express';
import { AppError, type ErrorKind } from '../../shared/errors/app-error.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { WebhookJobData } from '../../shared/queue/webhook-queue.ts';
import { clientAddress } from '../address/client-address.ts';
import type { Cidr } from '../address/parse-cidr.ts';
import type { TrustProxy } from '../address/parse-trust-proxy.ts';
import { isAllowed } from '../allowlist/is-allowed.ts';
import { dedupeKey } from '../dedupe-key.ts';
import { validateEnvelope } from '../envelope/validate-envelope.ts';
import type { ReceiverMetrics, RejectReason } from '../receiver-metrics.ts';
import type { WebhookSecret } from '../signature/parse-webhook-secrets.ts';
import { verifySignature } from '../signature/verify-signature.ts';
import type { Spool } from '../spool/open-spool.ts';
import type { EnqueueOutcome } from '../store/enqueue-once.ts';
import { withTimeout } from '../store/with-timeout.ts';
import { isJsonContentType } from './is-json-content-type.ts';
import { readRawBody } from './read-raw-body.ts';

export interface WebhookSettings {
  /** Undefined when WEBHOOK_ALLOWLIST=off (local development only). */
  allowlist: readonly Cidr[] | undefined;
  trustProxy: TrustProxy;
  secrets: readonly WebhookSecret[];
  maxBodyBytes: number;
  enqueueTimeoutMs: number;
}

export interface WebhookHandlerDeps {
  settings: WebhookSettings;
  /** Dedupe check + bull add (enqueueOnce); idempotent per event. */
  enqueue: (job: WebhookJobData) => Promise<EnqueueOutcome>;
  spool: Spool;
  metrics: ReceiverMetrics;
  logger: Logger;
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
  const { settings, metrics, logger } = deps;
  const now = deps.now ?? (() => new Date());
  let enqueueFailing = false;

  // The acknowledgement's bytes, written directly: express's json() would stringify `{}` and run
  // its send() negotiation on every request of the hottest path (BENCHMARKS.md, "Receiver").
  const ok = (res: Parameters<RequestHandler>[1]) => {
    res.statusCode = 200;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end(emptyObject);
  };

  return async (req, res, next) => {
    const started = performance.now();
    metrics.received.inc();
    res.once('finish', () => {
      metrics.ackSeconds.observe({ status: String(res.statusCode) }, (performance.now() - started) / 1000);
    });
    const reject = (reason: RejectReason, error: AppError) => {
      metrics.rejected.inc({ reason });
      logger.debug({ reason, status: error.status }, 'webhook refused');
      next(error);
    };

    // 1. Source address (platform document, section 5.10).
    if (settings.allowlist) {
      const client = clientAddress(
        req.socket.remoteAddress,
        req.headers['x-forwarded-for'],
        settings.trustProxy,
      );
      if (!client.ok || !isAllowed(settings.allowlist, client.address)) {
        return reject('forbidden', new AppError('FORBIDDEN', 'source address is not allowed'));
      }
    }
    // 2. The legacy duplicate (section 5.9): acknowledged, never queued.
    if (req.headers['x-legacy-signature'] !== undefined) {
      metrics.dropped.inc({ reason: 'legacy' });
      return ok(res);
    }
    // 3. JSON only, size-limited while streaming. Node keeps only the first of repeated
    // Content-Type lines; two of them are ambiguous (a proxy may have read the other), so refused.
    const contentTypes = req.headersDistinct['content-type'];
    if (contentTypes?.length !== 1 || !isJsonContentType(contentTypes[0])) {
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
    const job: WebhookJobData = {
      dedupeKey: dedupeKey(rawBody),
      webhook: signature.webhook,
      receivedAt: now().toISOString(),
      event: envelope.envelope.event,
      data: envelope.envelope.data,
    };
    const enqueueStarted = performance.now();
    let outcome: EnqueueOutcome | undefined;
    try {
      outcome = await withTimeout(deps.enqueue(job), settings.enqueueTimeoutMs);
      enqueueFailing = false;
    } catch (error) {
      if (!enqueueFailing) logger.warn({ err: (error as Error).message }, 'enqueue failed; spooling events');
      enqueueFailing = true;
    }
    metrics.enqueueSeconds.observe(
      { outcome: outcome ?? 'failed' },
      (performance.now() - enqueueStarted) / 1000,
    );
    if (outcome === 'duplicate') {
      metrics.dropped.inc({ reason: 'duplicate' });
      return ok(res);
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
    metrics.accepted.inc({ stored_in: outcome === 'queued' ? 'queue' : 'spool' });
    ok(res);
  };
}
