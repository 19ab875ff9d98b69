/**
 * An append refused at once because the spool already holds SpoolOptions.maxPendingBytes of events
 * not yet on disk: the disk is not keeping up (it stalls, or is far slower than the requests), and
 * waiting in memory would let a long stall grow the process until it is killed. Nothing of the
 * refused event was kept: the sender may retry it (the platform does not promise to).
 */
export class SpoolFullError extends Error {
  override name = 'SpoolFullError';
  readonly code = 'SPOOL_FULL';

  constructor(pendingBytes: number) {
    super(`the spool holds ${pendingBytes} bytes not yet written to disk`);
  }
}
