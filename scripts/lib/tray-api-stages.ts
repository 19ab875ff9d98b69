import type { Server } from 'node:http';
import type { Express, Response } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { TokenVerifier } from '../../tray-service/http/auth/create-token-verifier.ts';
import type { MessageRenderer } from '../../tray-service/messages/message-renderer.ts';
import type { TrayStorage } from '../../tray-service/storage/port.ts';
import { quantile } from './quantile.ts';
import type { StageTimer } from './stage-timer.ts';

// The seams of the tray API that `bench:api --stages` times, each wrapped from outside: the product
// code runs unchanged. Stage names say what the time is spent on.

/** Each storage read's stage is this prefix and `<part>.<function>`. */
export const STORAGE_STAGE_PREFIX = 'storage: ';
/** The rate limiter's consume, a Redis round trip run beside the storage read. */
export const RATE_LIMIT_STAGE = 'rate limit (Redis)';
/** A request from arrival (headers parsed) to its response handed to the socket. */
export const SERVER_TOTAL_STAGE = 'server total';

/** The name a request is filed under: its method and path without the query. */
export const requestName = (method: string, url: string) => `${method} ${url.split('?')[0]}`;

type AsyncFn = (...args: never[]) => Promise<unknown>;

/** Each function of `part`, timed as `<name>.<function>`. */
function timedPart<T extends object>(stages: StageTimer, name: string, part: T): T {
  const timed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(part)) {
    timed[key] =
      typeof value === 'function'
        ? stages.wrap(`${STORAGE_STAGE_PREFIX}${name}.${key}`, (value as AsyncFn).bind(part))
        : value;
  }
  return timed as T;
}

/** The storage the API reads, every read timed as a round trip to the database. */
export function timedStorage(storage: TrayStorage, stages: StageTimer): TrayStorage {
  return {
    ...storage,
    records: timedPart(stages, 'records', storage.records),
    lastRead: timedPart(stages, 'lastRead', storage.lastRead),
    clears: timedPart(stages, 'clears', storage.clears),
    ...(storage.inbox ? { inbox: timedPart(stages, 'inbox', storage.inbox) } : {}),
  };
}

export function timedVerifier(stages: StageTimer | undefined, verify: TokenVerifier): TokenVerifier {
  return stages ? stages.wrap('token verification', verify) : verify;
}

/** The per-user limiter, its consume (a Redis round trip) timed. */
export function timedLimiter(
  stages: StageTimer | undefined,
  limiter: RateLimiterAbstract,
): RateLimiterAbstract {
  if (!stages) return limiter;
  const consume = stages.wrap(RATE_LIMIT_STAGE, limiter.consume.bind(limiter));
  return new Proxy(limiter, {
    get: (target, property, receiver) =>
      property === 'consume' ? consume : (Reflect.get(target, property, receiver) as unknown),
  });
}

export function timedMessages(stages: StageTimer | undefined, messages: MessageRenderer): MessageRenderer {
  if (!stages) return messages;
  return {
    locales: messages.locales,
    defaultLocale: messages.defaultLocale,
    negotiate: stages.wrapSync('messages: negotiate + render', messages.negotiate.bind(messages)),
    render: stages.wrapSync('messages: negotiate + render', messages.render.bind(messages)),
  };
}

/** res.json: serialising the body and handing it to the socket (ETag included). */
export function timeJson(app: Express, stages: StageTimer): void {
  const json = app.response.json;
  app.response.json = function (this: Response, body: unknown) {
    const started = performance.now();
    try {
      return json.call(this, body);
    } finally {
      stages.record('JSON + send', performance.now() - started);
    }
  };
}

/** Each request from arrival (headers parsed) to its response handed to the socket, by path. */
export function timeRequests(server: Server, stages: StageTimer): void {
  server.prependListener('request', (req, res) => {
    const started = performance.now();
    stages.begin(requestName(req.method ?? 'GET', req.url ?? ''));
    res.once('finish', () => {
      stages.record(SERVER_TOTAL_STAGE, performance.now() - started);
      stages.end();
    });
  });
}

/** Markdown rows: per request and stage, the p50 and p99 of its per-request total, in ms. */
export function stageTable(userId: string, taken: Map<string, Map<string, number[]>>): string[] {
  const rows = [`| ${userId}: stage | p50 | p99 | calls |`, '| --- | --- | --- | --- |'];
  for (const [request, byStage] of taken) {
    const total = byStage.get(SERVER_TOTAL_STAGE) ?? [];
    const sortedStages = [...byStage].sort(([a], [b]) =>
      a === SERVER_TOTAL_STAGE ? 1 : b === SERVER_TOTAL_STAGE ? -1 : a.localeCompare(b),
    );
    for (const [stage, samples] of sortedStages) {
      const sorted = [...samples].sort((x, y) => x - y);
      rows.push(
        `| ${request}: ${stage} | ${quantile(sorted, 0.5).toFixed(3)} | ${quantile(sorted, 0.99).toFixed(3)} | ${samples.length} of ${total.length} |`,
      );
    }
  }
  return rows;
}
