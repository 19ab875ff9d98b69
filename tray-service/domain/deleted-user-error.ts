/**
 * A write of state a user keeps for themselves (a mute, their last-read time, a block) asked after
 * their deletion was stored, with a token issued before it (docs/tray-rules.md#deleted-users): a
 * deletion is final, so nothing of it is kept (tray-service/http/map-domain-errors.ts answers 410).
 */
export class DeletedUserError extends Error {
  /** Stable: transports and logs tell it by this, not by the message. */
  readonly code = 'USER_DELETED';

  constructor() {
    super('this user was deleted: the tray keeps nothing more of theirs');
    this.name = 'DeletedUserError';
  }
}
