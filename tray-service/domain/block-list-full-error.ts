import { MAX_BLOCKED_USERS } from './block-list-limit.ts';

/** A block of a new user when the caller already blocks MAX_BLOCKED_USERS: bad input, nothing changed. */
export class BlockListFullError extends Error {
  /** Stable: transports and logs tell it by this, not by the message. */
  readonly code = 'BLOCK_LIST_FULL';

  constructor() {
    super(`at most ${MAX_BLOCKED_USERS} users may be blocked; unblock one first`);
    this.name = 'BlockListFullError';
  }
}
