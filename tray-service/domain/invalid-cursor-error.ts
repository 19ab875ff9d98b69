/**
 * A page cursor that no page of this service handed out (garbled, truncated, of another list). A
 * caller's mistake, never the service's: every transport answers it as bad input
 * (tray-service/http/map-domain-errors.ts gives the HTTP answer).
 */
export class InvalidCursorError extends Error {
  /** Stable: transports and logs tell it by this, not by the message. */
  readonly code = 'INVALID_CURSOR';

  /** The query parameter that carried it. */
  readonly parameter: string;

  constructor(parameter: string) {
    super(`${parameter}: not a cursor this API returned`);
    this.parameter = parameter;
    this.name = 'InvalidCursorError';
  }
}
