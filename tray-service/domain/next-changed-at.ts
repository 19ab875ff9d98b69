/**
 * The changedAt of a record's next state: the writer's clock, or just after the record's current
 * state when that is not earlier. A live stream tells a record's states apart by changedAt and
 * counts a state at or below one it delivered as delivered (docs/live-tray.md, "Event ids"); a
 * writer whose clock was read before a concurrent write of the same record was stamped (or runs
 * behind the other writer's) would otherwise store a later state under an earlier time, and no
 * stream would ever send it. `current` is undefined for a record not stored yet.
 */
export function nextChangedAt(current: number | undefined, now: number): number {
  return current === undefined ? now : Math.max(now, current + 1);
}
