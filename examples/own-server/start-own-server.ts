import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Cidr } from '../../shared/address/parse-cidr.ts';
import type { TrustProxy } from '../../receiver/address/parse-trust-proxy.ts';
import { createDeliveryDecider, readBody } from '../../receiver/decision/create-delivery-decider.ts';
import { answerClientError } from '../../shared/http/listen.ts';
import { deferContinue } from '../../shared/http/expect-continue.ts';
import { readRawBody } from '../../receiver/http/read-raw-body.ts';
import { webhookPathMatcher } from '../../receiver/http/webhook-path-matcher.ts';
import type { SignatureScheme, WebhookSecret } from '../../receiver/signature/parse-webhook-secrets.ts';
import { AppError, errorBody } from '../../shared/errors/app-error.ts';

/** A verified event, as your function receives it. */
export interface VerifiedEvent {
  /** The webhook whose secret signed it (its name in WEBHOOK_SECRETS). */
  readonly webhook: string;
  /** The scheme that verified it: the platform's, or Standard Webhooks (another sender's). */
  readonly scheme: SignatureScheme;
  readonly event: string;
  readonly data: Record<string, unknown>;
  /**
   * The delivery's dedupe key: a redelivery has the same one, so do each key's work once, and keep
   * the keys at least twice the timestamp tolerance and a second (601 s by default), or a replayed
   * Standard Webhooks delivery is taken again while its signature is still accepted. Except a join,
   * leave or profile update without `data.createdAt`, keyed once per delivery (docs/starter-kit.md):
   * apply those as the latest state.
   */
  readonly key: string;
}

export interface OwnServerOptions {
  /** The webhooks, e.g. loadReceiverConfig(process.env).WEBHOOK_SECRETS. */
  readonly secrets: readonly WebhookSecret[];
  readonly timestampToleranceSeconds?: number;
  /**
   * Check 1, the source address: the allowed ranges (e.g. createAllowlist(WEBHOOK_REGIONS,
   * WEBHOOK_ALLOW_CIDRS)) and the trusted proxies. Off by default: whoever sends is judged by the
   * signature alone, as with WEBHOOK_ALLOWLIST=off.
   */
  readonly allowlist?: readonly Cidr[];
  readonly trustProxy?: TrustProxy;
  readonly port: number;
  readonly host?: string;
  readonly path?: string;
  readonly maxBodyBytes?: number;
  /**
   * Told when `handle` throws, with the error and the event: the sender only sees a 503 and
   * delivers again, so this is where the reason goes (a log line, an alert).
   */
  readonly onFailed?: (failure: { readonly error: Error; readonly event: VerifiedEvent }) => void;
}

export interface RunningOwnServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Your own HTTP server, with the receiver's decision and nothing else of it (no Express, no
 * Redis): the receiver's path matcher, then the decision's `screen` on the head (source address,
 * legacy duplicate, content type and encoding), the body's exact bytes, then its `judge`
 * (signature, envelope; docs/receiver.md#verifying-in-your-own-http-server). It answers a
 * refusal as the receiver does, acknowledges a legacy duplicate without handing it on, and hands
 * each accepted event to `handle` before answering 200. If `handle` throws, the answer is
 * 503 and the sender delivers again later; `onFailed` is told why. Rejects with Node's listen error (its `code`, e.g.
 * EADDRINUSE) when the port cannot be bound.
 */
export async function startOwnServer(
  options: OwnServerOptions,
  handle: (event: VerifiedEvent) => Promise<void> | void,
): Promise<RunningOwnServer> {
  const decider = createDeliveryDecider({
    secrets: options.secrets,
    ...(options.timestampToleranceSeconds === undefined
      ? {}
      : { timestampToleranceSeconds: options.timestampToleranceSeconds }),
    allowlist: options.allowlist,
    trustProxy: options.trustProxy ?? { kind: 'none' },
  });
  // The receiver's spellings of the path too: a trailing slash, another case, a query string.
  const isWebhookPath = webhookPathMatcher(options.path ?? '/webhooks');

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    // The receiver's own messages for a path or method it does not serve.
    const path = (req.url ?? '').split('?', 1)[0];
    if (!isWebhookPath(req.url))
      return refuse(res, new AppError('NOT_FOUND', `no route for ${req.method} ${path}`));
    if (req.method !== 'POST') {
      return refuse(
        res,
        new AppError('METHOD_NOT_ALLOWED', `method ${req.method} is not allowed here`, {
          headers: { Allow: 'POST' },
        }),
      );
    }
    // 1-3. Source address, legacy duplicate (acknowledged, never handed on), content type.
    const head = decider.screen(req);
    if (head !== readBody) {
      if (head.verdict === 'refuse') return refuse(res, new AppError(head.kind, head.message));
      return send(res, 200, {});
    }
    let body: Buffer;
    try {
      // A sender waiting for `100 Continue` is invited to send its body only now (checkContinue
      // below), unless it declared one over the limit.
      body = await readRawBody(req, res, options.maxBodyBytes ?? 1024 * 1024);
    } catch (error) {
      return refuse(res, error instanceof AppError ? error : new AppError('BAD_REQUEST', 'bad request'));
    }
    // 4-5. Signature, envelope.
    const verdict = decider.judge(body, req.headers);
    if (verdict.verdict === 'refuse') return refuse(res, new AppError(verdict.kind, verdict.message));
    const { webhook, scheme, envelope, dedupeKey: key } = verdict;
    let event: VerifiedEvent | undefined;
    try {
      event = {
        webhook,
        scheme,
        event: envelope.event,
        data: JSON.parse(envelope.dataJson) as Record<string, unknown>,
        key,
      };
      await handle(event);
    } catch (error) {
      try {
        if (event)
          options.onFailed?.({ error: error instanceof Error ? error : new Error(String(error)), event });
      } catch {
        // A reporter that fails changes no answer: the sender still gets its 503 and delivers again.
      }
      return refuse(res, new AppError('UNAVAILABLE', 'the event could not be handled; retry later'));
    }
    send(res, 200, {});
  };

  // Slow clients as the receiver cuts them: headers within 5 s, the whole request within 15 s,
  // checked every second (Node's defaults, 60 s and 300 s checked every 30 s, let a few slow
  // connections hold a server's sockets for minutes).
  const server = createServer(
    { headersTimeout: 5_000, requestTimeout: 15_000, connectionsCheckingInterval: 1_000 },
    (req, res) => {
      void answer(req, res);
    },
  );
  // A request Node's parser refuses, or one too slow, gets the JSON error body the receiver answers
  // (Node's own answer is a bare status line).
  server.on('clientError', answerClientError);
  // `Expect: 100-continue`: Node would invite the body before `answer` sees the request, so a
  // sender refused on its head would upload it for nothing (expect-continue.ts).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    deferContinue(req);
    void answer(req, res);
  });
  // A port in use (EADDRINUSE) rejects here; without the listener it was an unhandled 'error' event.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The JSON error, with the error's own headers (a 405's `Allow`). */
function refuse(res: ServerResponse, error: AppError): void {
  send(res, error.status, errorBody(error), error.headers);
}

function send(
  res: ServerResponse,
  status: number,
  body: object,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
