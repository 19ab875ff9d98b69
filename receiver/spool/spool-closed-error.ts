/**
 * An append refused because the spool was closed (the receiver is stopping): written after close,
 * it would land in a folder with no owner socket and no stopped mark, which no starting receiver
 * takes at once, through a file handle nothing closes. Nothing of the refused event was kept.
 */
export class SpoolClosedError extends Error {
  override name = 'SpoolClosedError';
  readonly code = 'SPOOL_CLOSED';

  constructor() {
    super('the spool is closed');
  }
}
