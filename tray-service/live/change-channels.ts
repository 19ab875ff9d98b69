import { createHash } from 'node:crypto';

/**
 * Users are spread over this many pub/sub channels. An API instance subscribes to the channels of
 * the users it holds streams for, so it receives about (its users' shards / SHARDS) of all changes;
 * a channel per user would cost one subscription per open stream's user instead.
 */
export const CHANGE_SHARDS = 256;

export function shardOf(userId: string): number {
  return createHash('sha256').update(userId).digest().readUInt16BE(0) % CHANGE_SHARDS;
}

export function changeChannel(prefix: string, shard: number): string {
  return `${prefix}:changes:${shard}`;
}
