/**
 * An `until` the tray refuses against its clock: a snooze's not later than now or more than
 * MAX_SNOOZE_DAYS on (snooze-mark.ts snoozeUntilProblem), a mute's not later than now or later
 * than LATEST_MUTE_UNTIL (mute-changes.ts muteUntilProblem). A caller's mistake, checked by the use
 * case before anything changes, so every transport refuses it alike
 * (tray-service/http/map-domain-errors.ts answers 400).
 */
export class InvalidUntilError extends Error {
  /** Stable: transports and logs tell it by this, not by the message. */
  readonly code = 'INVALID_UNTIL';

  /** `problem` names the field and what is expected, e.g. "until: expected a time later than now". */
  constructor(problem: string) {
    super(problem);
    this.name = 'InvalidUntilError';
  }
}
