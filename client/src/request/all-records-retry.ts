/**
 * How long after it began a call that takes every record of the user (mark all read, set the
 * last-read time, delete all, seen or archive all) may still be sent again after a 429 or 503. The
 * service takes the records it holds when it applies the call, not those the user saw when asking:
 * a retry 30 s later would also mark read, archive or delete what arrived in those 30 s, records
 * the user never saw. Within 2 s the two are the same for a person; past that the refusal is
 * thrown, and the app can ask the user again. That is three retries at the default backoff, but a
 * refusal whose `Retry-After` asks for longer (the service's own 503 asks for 5 s) is thrown at
 * once.
 */
export const ALL_RECORDS_RETRY_WITHIN_MS = 2_000;
