/**
 * A refusal from the tray API, carrying the service's stable error code so callers branch on
 * the code rather than on message text (which may be reworded).
 */
export class TrayApiError extends Error {
  readonly code: string;
  readonly status: number;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'TrayApiError';
    this.status = status;
    this.code = code;
  }
}
