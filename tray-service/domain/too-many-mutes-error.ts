import { MAX_MUTES_IN_FORCE } from './mute.ts';

/** A PUT of a new mute when the user already has MAX_MUTES_IN_FORCE in force: bad input, nothing changed. */
export class TooManyMutesError extends Error {
  /** Stable: transports and logs tell it by this, not by the message. */
  readonly code = 'TOO_MANY_MUTES';

  constructor() {
    super(`at most ${MAX_MUTES_IN_FORCE} mutes may be in force; remove one first`);
    this.name = 'TooManyMutesError';
  }
}
