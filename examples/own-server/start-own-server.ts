import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookVerifier } from '../../receiver/decision/create-webhook-verifier.ts';
import { readRawBody } from '../../receiver/http/read-raw-body.ts';
import type { WebhookSecret } from '../../receiver/signature/parse-webhook-secrets.ts';
import { AppError, errorBody } from '../../shared/errors/app-error.ts';
import { webhookPathMatcher } from './webhook-path-matcher.ts';

/** A verified event, as your function receives it. */
export interface VerifiedEvent {
  /** The webhook whose secret signed it (its name in WEBHOOK_SECRETS). */
  readonly webhook: string;
  readonly event: string;
  readonly data: Record<string, unknown>;
  /** The delivery's dedupe key: a redelivery has the same one, so do each key's work once. */
  readonly key: string;
}

export interface OwnServerOptions {
  /** The webhooks, e.g. loadReceiverConfig(process.env).WEBHOOK_SECRETS. */
  readonly secrets: readonly WebhookSecret[];
  readonly timestampToleranceSeconds?: number;
  readonly port: number;
  readonly host?: string;
  readonly path?: string;
  readonly maxBodyBytes?: number;
}

export interface RunningOwnServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Your own HTTP server, with the receiver's verification and nothing else of it (no Express, no
 * Redis): it reads the body's exact bytes, asks the verification core for a verdict
 * (docs/receiver.md#verifying-in-your-own-http-server), answers a refusal as the receiver does,
 * and hands each accepted event to `handle` before answering 200. If `handle` throws, the answer is
 * 503 and the sender delivers again later. Rejects with Node's listen error (its `code`, e.g.
 * EADDRINUSE) when the port cannot be bound.
 */
export async function startOwnServer(
  options: OwnServerOptions,
  handle: (event: VerifiedEvent) => Promise<void> | void,
): Promise<RunningOwnServer> {
  const verify = createWebhookVerifier({
    secrets: options.secrets,
    ...(options.timestampToleranceSeconds === undefined
      ? {}
      : { timestampToleranceSeconds: options.timestampToleranceSeconds }),
  });
  // The receiver's spellings of the path too: a trailing slash, another case, a query string.
  const isWebhookPath = webhookPathMatcher(options.path ?? '/webhooks');

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    if (!isWebhookPath(req.url)) return refuse(res, new AppError('NOT_FOUND', 'not found'));
    if (req.method !== 'POST') return refuse(res, new AppError('METHOD_NOT_ALLOWED', 'method not allowed'));
    let body: Buffer;
    try {
      body = await readRawBody(req, options.maxBodyBytes ?? 1024 * 1024);
    } catch (error) {
      return refuse(res, error instanceof AppError ? error : new AppError('BAD_REQUEST', 'bad request'));
    }
    const verdict = verify(body, req.headers);
    if (verdict.verdict === 'refuse') return refuse(res, new AppError(verdict.kind, verdict.message));
    const { webhook, envelope, dedupeKey: key } = verdict;
    try {
      const data = JSON.parse(envelope.dataJson) as Record<string, unknown>;
      await handle({ webhook, event: envelope.event, data, key });
    } catch {
      return refuse(res, new AppError('UNAVAILABLE', 'the event could not be handled; retry later'));
    }
    send(res, 200, {});
  };

  const server = createServer((req, res) => {
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

function refuse(res: ServerResponse, error: AppError): void {
  send(res, error.status, errorBody(error));
}

function send(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
