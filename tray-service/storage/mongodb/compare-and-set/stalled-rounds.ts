import { backOff } from '../driver/back-off.ts';
import { StorageBusyError } from '../../storage-busy-error.ts';

/**
 * Rounds in a row without progress before a writer waiting on records a concurrent writer holds
 * gives up (the job retries). Only a claim whose writer stopped between claim and write keeps a
 * record from moving that long: the rounds back off (backOff), together at most about 12 s.
 */
export const STALLED_ROUNDS = 60;

export interface StallOptions {
  /**
   * Waits before the next round, `round` being one more than the rounds in a row without progress
   * so far (default backOff). Tests pass their own to run the rounds at once or to move a record
   * between them.
   */
  backOff?: (round: number) => Promise<void>;
}

/**
 * When a writer retrying contended records gives up. A round in which one of them moved (written or
 * deleted here, gone, or moved on by a concurrent writer) is progress: the writers are taking
 * turns, and giving up would only have the queue retry the job for nothing. Only rounds in a row in
 * which none moved count, and the back-off starts short again after progress. `what` names the
 * records in the error (the job's failure as logged); a function is asked when it is thrown.
 */
export class StalledRounds {
  #stalled = 0;
  readonly #what: string | (() => string);
  readonly #backOff: (round: number) => Promise<void>;

  constructor(what: string | (() => string), options: StallOptions = {}) {
    this.#what = what;
    this.#backOff = options.backOff ?? backOff;
  }

  /** Waits before the next round: longer with each round in a row without progress. */
  wait(): Promise<void> {
    return this.#backOff(this.#stalled + 1);
  }

  /** Counts a round after its wait; throws once STALLED_ROUNDS in a row saw nothing move. */
  count(moved: boolean): void {
    this.#stalled = moved ? 0 : this.#stalled + 1;
    if (this.#stalled < STALLED_ROUNDS) return;
    const what = typeof this.#what === 'string' ? this.#what : this.#what();
    throw new StorageBusyError(`${what} still contended after ${STALLED_ROUNDS} rounds without progress`);
  }
}
