import { MAX_MUTE_SPANS_PER_TARGET, MAX_MUTE_SPANS_PER_USER } from './mute.ts';

/**
 * A PUT that would start a new span of a target the user already keeps MAX_MUTE_SPANS_PER_TARGET
 * spans of (muted anew that often within the records' retention), or while the user keeps
 * MAX_MUTE_SPANS_PER_USER spans of any targets: bad input, nothing changed.
 */
export class TooManyMuteSpansError extends Error {
  /** Stable: transports and logs tell it by this, not by the message. */
  readonly code = 'TOO_MANY_MUTE_SPANS';

  constructor(retentionDays: number, of: 'target' | 'user' = 'target') {
    super(
      of === 'target'
        ? `this target was muted anew ${MAX_MUTE_SPANS_PER_TARGET} times within ${retentionDays} days (the records' retention) of now; mute it again once the oldest of those ended longer ago`
        : `this user started ${MAX_MUTE_SPANS_PER_USER} mutes within ${retentionDays} days (the records' retention) of now; start another once the oldest of those ended longer ago`,
    );
    this.name = 'TooManyMuteSpansError';
  }
}
