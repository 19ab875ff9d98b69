import type Bull from 'bull';

/**
 * The parts of bull's Queue its type declarations leave out: its key names, the token its events
 * carry, and a job's key. Read by the scripts that write bull's keys themselves (the receiver's
 * enqueue, the replay's fresh attempts).
 */
export interface BullQueueInternals {
  readonly keys: Readonly<Record<'wait' | 'paused' | 'meta-paused' | 'failed', string>>;
  readonly token: string;
  toKey(id: string): string;
}

export const internalsOf = <T>(queue: Bull.Queue<T>): BullQueueInternals =>
  queue as unknown as BullQueueInternals;
