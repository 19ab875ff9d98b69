/**
 * The storage adapter in use has no inbox extensions yet (TrayStorage.inbox is absent): a limit of
 * this deployment, not the caller's mistake (tray-service/http/map-domain-errors.ts answers 501).
 */
export class InboxUnsupportedError extends Error {
  /** Stable: transports and logs tell it by this, not by the message. */
  readonly code = 'INBOX_UNSUPPORTED';

  constructor(engine: string) {
    super(
      `the ${engine} storage adapter does not support the inbox (views, seen, archive, snooze, mutes) yet`,
    );
    this.name = 'InboxUnsupportedError';
  }
}
