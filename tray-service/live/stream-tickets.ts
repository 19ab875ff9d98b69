import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../shared/redis/create-redis.ts';

/** How long a ticket can wait to be used. */
export const TICKET_TTL_SECONDS = 30;

/** 32 random bytes, base64url: what `issue` hands out; anything else is refused before Redis. */
const TICKET = /^[A-Za-z0-9_-]{43}$/;

export interface StreamTickets {
  /** Seconds a ticket stays valid. */
  readonly ttlSeconds: number;
  issue(userId: string): Promise<string>;
  /** The ticket's user, once: a second redeem (on any instance) or an expired ticket gives undefined. */
  redeem(ticket: string): Promise<string | undefined>;
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
  return {
    ttlSeconds,
    async issue(userId) {
      const ticket = randomBytes(32).toString('base64url');
      const set = await redis.set(key(ticket), userId, 'EX', ttlSeconds, 'NX');
      // 256 random bits never collide in practice; refusing one is still better than sharing one.
      if (set !== 'OK') throw new Error('stream ticket collided');
      return ticket;
    },
    async redeem(ticket) {
      if (!TICKET.test(ticket)) return undefined;
      return (await redis.getdel(key(ticket))) ?? undefined;
    },
  };
}
