/**
 * More events matched an export while it ran than ADMIN_EXPORT_MAX_ROWS, which its count had
 * admitted (events stored since with an earlier receivedAt, a queue's backlog, joined the stream).
 * The export is cut short on it, so the download cannot pass for complete.
 */
export class ExportOverflowError extends Error {
  readonly code = 'EXPORT_OVERFLOW';
  readonly atMost: number;

  constructor(atMost: number) {
    super(
      `more than ${atMost} events (ADMIN_EXPORT_MAX_ROWS) matched once the export ran: cut short, narrow since/until`,
    );
    this.name = 'ExportOverflowError';
    this.atMost = atMost;
  }
}
