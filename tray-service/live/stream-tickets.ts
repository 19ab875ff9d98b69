import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { guardedRedis } from '../../shared/redis/hung-redis-breaker.ts';

/** How long a ticket can wait to be used. */
export const TICKET_TTL_SECONDS = 30;

/** 32 random bytes, base64url: what `issue` hands out; anything else is refused before Redis. */
const TICKET = /^[A-Za-z0-9_-]{43}$/;

/** Who a ticket stands for, and until when the token that asked for it is valid (epoch ms). */
export interface TicketHolder {
  userId: string;
  expiresAt?: number;
}

export interface StreamTickets {
  /** Seconds a ticket stays valid. */
  readonly ttlSeconds: number;
  issue(holder: TicketHolder): Promise<string>;
  /** The ticket's holder, once: a second redeem (on any instance) or an expired ticket gives undefined. */
  redeem(ticket: string): Promise<TicketHolder | undefined>;
}

/** The stored value: the holder as JSON, so the stream it opens ends with the issuing token. */
function decodeHolder(value: string | null): TicketHolder | undefined {
  if (value === null) return undefined;
  try {
    const parsed = JSON.parse(value) as { userId?: unknown; expiresAt?: unknown };
    if (typeof parsed.userId !== 'string') return undefined;
    return typeof parsed.expiresAt === 'number'
      ? { userId: parsed.userId, expiresAt: parsed.expiresAt }
      : { userId: parsed.userId };
  } catch {
    return undefined;
  }
}

/**
 * Browsers cannot set headers on an EventSource, and a token in a URL ends up in logs and
 * histories: a ticket is a short-lived, single-use stand-in. Kept in Redis (SET NX EX, GETDEL) so
 * it is redeemed once whichever instance the stream lands on.
 */
export function createStreamTickets(
  redis: RedisClient,
  prefix: string,
  ttlSeconds = TICKET_TTL_SECONDS,
): StreamTickets {
  const key = (ticket: string) => `${prefix}:ticket:${ticket}`;
  // A Redis that hangs fails the call within the budget, as an unreachable one does (503).
  const guarded = guardedRedis(redis);
  return {
    ttlSeconds,
    async issue(holder) {
      const ticket = randomBytes(32).toString('base64url');
      const set = await guarded(() => redis.set(key(ticket), JSON.stringify(holder), 'EX', ttlSeconds, 'NX'));
      // 256 random bits never collide in practice; refusing one is still better than sharing one.
      if (set !== 'OK') throw new Error('stream ticket collided');
      return ticket;
    },
    async redeem(ticket) {
      if (!TICKET.test(ticket)) return undefined;
      return decodeHolder(await guarded(() => redis.getdel(key(ticket))));
    },
  };
}
