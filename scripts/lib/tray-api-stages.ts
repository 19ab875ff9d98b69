import type { Server } from 'node:http';
import type { Express, Response } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { TokenVerifier } from '../../tray-service/http/auth/create-token-verifier.ts';
import type { MessageRenderer } from '../../tray-service/messages/message-renderer.ts';
import type { TrayStorage } from '../../tray-service/storage/port.ts';
import type { StageTimer } from './stage-timer.ts';

// The seams of the tray API that `bench:api --stages` times, each wrapped from outside: the product
// code runs unchanged. Stage names say what the time is spent on.

type AsyncFn = (...args: never[]) => Promise<unknown>;

/** Each function of `part`, timed as `<name>.<function>`. */
function timedPart<T extends object>(stages: StageTimer, name: string, part: T): T {
  const timed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(part)) {
    timed[key] =
      typeof value === 'function'
        ? stages.wrap(`storage: ${name}.${key}`, (value as AsyncFn).bind(part))
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
  const consume = stages.wrap('rate limit (Redis)', limiter.consume.bind(limiter));
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
    stages.begin(`GET ${(req.url ?? '').split('?')[0]}`);
    res.once('finish', () => {
      stages.record('server total', performance.now() - started);
      stages.end();
    });
  });
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** Markdown rows: per request and stage, the p50 and p99 of its per-request total, in ms. */
export function stageTable(userId: string, taken: Map<string, Map<string, number[]>>): string[] {
  const rows = [`| ${userId}: stage | p50 | p99 | calls |`, '| --- | --- | --- | --- |'];
  for (const [request, byStage] of taken) {
    const total = byStage.get('server total') ?? [];
    const sortedStages = [...byStage].sort(([a], [b]) =>
      a === 'server total' ? 1 : b === 'server total' ? -1 : a.localeCompare(b),
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
