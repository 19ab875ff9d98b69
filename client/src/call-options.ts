/** What every method of the client takes last. */
export interface CallOptions {
  /** Aborts the call, and any wait before sending it again. */
  signal?: AbortSignal;
}
