import type { Redis } from 'ioredis';

/** The client's socket: ioredis types it as always there; it is not before the first connection. */
export const socketOf = (redis: Redis): Redis['stream'] | undefined =>
  redis.stream as Redis['stream'] | undefined;
