/**
 * A write that could not get its turn within the storage's wait: other writes of the same user
 * kept it out (MongoDB's mute lock, a compare-and-set that kept losing). Like PostgreSQL's
 * statement timeout in the same place, it says "try again", never "this request is wrong", so
 * it answers 503 with Retry-After on either engine.
 */
export class StorageBusyError extends Error {
  readonly code = 'STORAGE_BUSY';
  constructor(message: string) {
    super(message);
    this.name = 'StorageBusyError';
  }
}
