/**
 * A page cursor that no page of this service handed out (garbled, truncated), or one handed out
 * for another list or another filter. A caller's mistake, never the service's: every transport
 * answers it as bad input (tray-service/http/map-domain-errors.ts gives the HTTP answer).
 */
export class InvalidCursorError extends Error {
  /** Stable: transports and logs tell it by this, not by the message. */
  readonly code = 'INVALID_CURSOR';

  /** The query parameter that carried it. */
  readonly parameter: string;

  /** `problem`: what is wrong with it, when more is known than that no page handed it out. */
  constructor(parameter: string, problem = 'not a cursor this API returned') {
    super(`${parameter}: ${problem}`);
    this.parameter = parameter;
    this.name = 'InvalidCursorError';
  }
}
