import { TimeoutError } from '../errors/timeout-error.ts';
import type { Logger } from '../logging/create-logger.ts';
import { withTimeout } from '../time/with-timeout.ts';
import { Cluster } from 'ioredis';
import type { RedisClient } from './create-redis.ts';
import { dropConnection } from './drop-connection.ts';

/** A call to Redis that ran out of its budget: Redis is there but does not answer. */
export class RedisTimeoutError extends TimeoutError {
  override readonly code = 'REDIS_TIMEOUT';
  constructor(ms: number) {
    super(ms, `Redis did not answer within ${ms} ms`);
    this.name = 'RedisTimeoutError';
  }
}

/** Refused at once: an earlier call to Redis ran out of its budget and is still unanswered. */
export class RedisUnansweredError extends Error {
  readonly code = 'REDIS_UNANSWERED';
  constructor() {
    super('Redis has not answered an earlier call; not sending more until it does');
    this.name = 'RedisUnansweredError';
  }
}

export interface HungRedisBreaker {
  /**
   * Runs `operation` within `budgetMs` (else rejects with a TimeoutError), or rejects at once with
   * RedisUnansweredError while a call that ran out of its budget is still unanswered.
   */
  call<T>(operation: () => Promise<T>, budgetMs: number): Promise<T>;
  /** Whether calls are refused now. */
  readonly open: boolean;
}

export interface HungRedisBreakerOptions {
  /** How long a call may stay unanswered before the connection is dropped and made again. */
  reconnectAfterMs: number;
  /**
   * Drops the connection, failing every command still waiting on it (which frees their events'
   * text), and connects again.
   */
  reconnect: () => void;
  onOpen?: () => void;
  onClose?: () => void;
}

/**
 * A Redis that accepts commands but does not answer (stopped, overloaded, or a connection that
 * died without a reset: TCP keeps it open for minutes) would otherwise receive every later batch
 * too, and each would wait in the client's memory with its events' text, without bound. So once
 * a call runs out of its budget, nothing more is sent until it is answered: the callers fail at
 * once and spool their events. A call unanswered for `reconnectAfterMs` has the connection
 * dropped, which fails it and frees what it holds; the breaker closes as soon as the unanswered
 * calls settle, by an answer or by the drop.
 */
export function createHungRedisBreaker(options: HungRedisBreakerOptions): HungRedisBreaker {
  const unanswered = new Set<Promise<unknown>>();
  let reconnectTimer: NodeJS.Timeout | undefined;

  const settled = (call: Promise<unknown>) => {
    unanswered.delete(call);
    if (unanswered.size > 0) return;
    clearTimeout(reconnectTimer);
    reconnectTimer = undefined;
    options.onClose?.();
  };
  const overrun = (call: Promise<unknown>) => {
    if (unanswered.has(call)) return;
    if (unanswered.size === 0) {
      options.onOpen?.();
      reconnectTimer = setTimeout(() => {
        reconnectTimer = undefined;
        if (unanswered.size > 0) options.reconnect();
      }, options.reconnectAfterMs);
      reconnectTimer.unref();
    }
    unanswered.add(call);
    call.then(
      () => settled(call),
      () => settled(call),
    );
  };

  return {
    get open() {
      return unanswered.size > 0;
    },
    async call<T>(operation: () => Promise<T>, budgetMs: number): Promise<T> {
      if (unanswered.size > 0) throw new RedisUnansweredError();
      const call = operation();
      try {
        return await answeredWithin(call, budgetMs);
      } catch (error) {
        if (error instanceof RedisTimeoutError) overrun(call);
        throw error;
      }
    },
  };
}

/** How long a call through guardedRedis may wait for Redis. */
export const REDIS_CALL_BUDGET_MS = 1_000;
/** How long such a call may stay unanswered before the connection is dropped and made again. */
export const REDIS_RECONNECT_AFTER_MS = 5_000;

/** Whether `error` is the breaker's: the call ran out of its budget, or one before it did. */
export const isUnanswered = (error: unknown): boolean =>
  error instanceof RedisTimeoutError || error instanceof RedisUnansweredError;

/** `call` within `ms`, or a RedisTimeoutError. */
export async function answeredWithin<T>(call: Promise<T>, ms: number): Promise<T> {
  try {
    return await withTimeout(call, ms);
  } catch (error) {
    throw error instanceof TimeoutError ? new RedisTimeoutError(ms) : error;
  }
}

const breakers = new WeakMap<RedisClient, HungRedisBreaker>();

/**
 * Runs one call on `redis` within REDIS_CALL_BUDGET_MS. Its failures (RedisTimeoutError,
 * RedisUnansweredError) are, to isRedisUnavailable, Redis not there. On a ready connection the
 * call goes through the connection's breaker: a ready connection that leaves a call unanswered is
 * a Redis that hangs. On one that is not ready (Redis down, the client reconnecting) the call waits
 * in ioredis's offline queue for the connection, which is no hang: it only gets the budget, and
 * the breaker is left closed, so the calls made once Redis is back (a stream's catch-up) are not
 * refused for those that waited.
 */
export function guardedRedis(redis: RedisClient, logger?: Logger) {
  const breaker = connectionBreaker(redis, logger);
  // A cluster's one client covers every master: one hung master would have the breaker refuse
  // calls to the healthy ones too, and ioredis sends a dropped node's commands to the same node
  // again. There calls only get the budget; the slot map's refresh drops a hung master.
  const breakable = !(redis instanceof Cluster);
  return async <T>(call: () => Promise<T>): Promise<T> =>
    breakable && redis.status === 'ready'
      ? breaker.call(call, REDIS_CALL_BUDGET_MS)
      : answeredWithin(call(), REDIS_CALL_BUDGET_MS);
}

/** Who hears of a dropped connection: the latest logger given for it. */
const loggers = new WeakMap<RedisClient, Logger>();

/**
 * The breaker of one connection, shared by everything that calls Redis on it (the tray's rate
 * limits, live changes, stream places and tickets, admin sessions): they all see the same hang,
 * and the connection is dropped once.
 */
function connectionBreaker(redis: RedisClient, logger?: Logger): HungRedisBreaker {
  if (logger) loggers.set(redis, logger);
  let breaker = breakers.get(redis);
  if (!breaker) {
    breaker = createHungRedisBreaker({
      reconnectAfterMs: REDIS_RECONNECT_AFTER_MS,
      reconnect: () => {
        loggers
          .get(redis)
          ?.warn('Redis left a call unanswered too long; dropping the connection and connecting again');
        dropConnection(redis);
      },
    });
    breakers.set(redis, breaker);
  }
  return breaker;
}
