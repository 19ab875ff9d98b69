/**
 * How far back a live stream's reconnect looks before the newest change it delivered: a record's
 * `changedAt` is stamped by its writer before the write lands and is announced, so changes of
 * concurrent writers can reach a stream out of order by up to that delay. Within this window a
 * stream tells states apart by the versions its cursor lists (docs/live-tray.md, "Event ids");
 * before it, every change counts as delivered. So every write must announce what it changed
 * within this window of its stamp, or stamp it anew when it tells it later (a large fan-out
 * committing seconds after its stamp).
 */
export const SETTLE_MS = 5_000;

/**
 * How long a write may run past the time it was given before what it writes is stamped later: a
 * mark that waited for a fan-out's locks, or one of thousands of records on a slow server, stamps
 * its records with that time plus what it ran beyond this, so they are stored and told within
 * SETTLE_MS of their stamp. Below it, the stamp is the time given, as the caller read it.
 */
export const LATE_STAMP_AFTER_MS = 1_000;
