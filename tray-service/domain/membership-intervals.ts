import { DAY_MS } from '../../shared/time/durations.ts';

/** One join or leave of one user in one community, at the platform's time (epoch ms). */
export interface MembershipEdge {
  joined: boolean;
  at: number;
  /**
   * Its place in the order the tray processed changes and actions in (awayFor); none for a change
   * stored before the tray kept that order, which counts as processed before every action.
   */
  processed?: number;
  /**
   * When the tray processed it (epoch ms, the processing's clock). Only the prune reads it
   * (prunableChanges); a change without one is never pruned.
   */
  processedAt?: number;
}

/** A span of membership: member from `from` (inclusive) until `to` (exclusive; Infinity if still a member). */
export interface MembershipInterval {
  from: number;
  to: number;
}

/**
 * Folds a member's joins and leaves, in any order and with repeats, into their membership
 * intervals (docs/tray-engine.md#membership-by-time). Pure, and the same whatever order the
 * changes arrived in: they are sorted by time, a leave after a join at an equal time (so a join
 * and a leave at the same instant leave the user out, whichever was stored first). A join while
 * already a member and a leave while not one change nothing: the membership starts at the first
 * join and ends at the first leave after it.
 */
export function membershipIntervals(edges: Iterable<MembershipEdge>): MembershipInterval[] {
  const sorted = [...edges].sort((a, b) => a.at - b.at || Number(b.joined) - Number(a.joined));
  const intervals: MembershipInterval[] = [];
  let openFrom: number | undefined;
  for (const edge of sorted) {
    if (edge.joined && openFrom === undefined) openFrom = edge.at;
    else if (!edge.joined && openFrom !== undefined) {
      if (edge.at > openFrom) intervals.push({ from: openFrom, to: edge.at });
      openFrom = undefined;
    }
  }
  if (openFrom !== undefined) intervals.push({ from: openFrom, to: Infinity });
  return intervals;
}

/** Whether the intervals make the user a member at `at` (joined at or before it, not left by then). */
export function isMemberAt(intervals: readonly MembershipInterval[], at: number): boolean {
  return intervals.some((interval) => interval.from <= at && at < interval.to);
}

/**
 * The spans in which a user was away from a community: every time from the first join or leave the
 * tray has of them on that is outside their membership intervals, sorted. Before that first change
 * the tray knows nothing of the user there, so nothing is away; a user with no change has no span.
 * A member gets nothing of the community's targets while away (docs/tray-rules.md#leaving-and-rejoining-a-community).
 */
export function awaySpans(edges: Iterable<MembershipEdge>): MembershipInterval[] {
  const list = [...edges];
  if (list.length === 0) return [];
  const spans: MembershipInterval[] = [];
  let from = Math.min(...list.map((edge) => edge.at));
  for (const interval of membershipIntervals(list)) {
    if (interval.from > from) spans.push({ from, to: interval.from });
    from = Math.max(from, interval.to);
  }
  if (from !== Infinity) spans.push({ from, to: Infinity });
  return spans;
}

/** Whether `at` falls in one of the away spans (awaySpans). */
export function isAwayAt(spans: readonly MembershipInterval[], at: number): boolean {
  return spans.some((span) => span.from <= at && at < span.to);
}

/**
 * Whether the user was away at some time at or after `at`: a record counting from `at` must then
 * look at its actions' times; otherwise every action since counts.
 */
export function isAwaySince(spans: readonly MembershipInterval[], at: number): boolean {
  return spans.some((span) => span.to > at);
}

/**
 * The span a join at `joinAt` opened, from `joinAt` on, by the processing order: the posts a join
 * processed late must add (each still judged by memberFor). `edges` are the member's changes, the
 * join among them as stored (its first place; beside an import at the same time, the place).
 * - A leave at or after the join processed before it ends the span there.
 * - A leave processed after the join takes nothing back (one stored since the join, by a retried
 *   job or a concurrent one, included), so it ends nothing at its own time: the posts dated from it
 *   on that were processed before it are let in. Those are dated at most PROCESSING_SKEW_MS past
 *   its processing time, so the span ends there (where the leave has one), not at tomorrow: a join
 *   replayed long after its member left reads no more than that.
 * - A join without a place (0: stored before the tray kept the order, before every action) ends at
 *   every later leave, as the intervals do.
 * Undefined when the join is not among the edges, or a leave processed before it falls at its time.
 */
export function spanOfJoin(edges: readonly MembershipEdge[], joinAt: number): MembershipInterval | undefined {
  const joins = edges.filter((edge) => edge.joined && edge.at === joinAt);
  if (joins.length === 0) return undefined;
  const place = Math.max(0, ...joins.map((edge) => edge.processed ?? 0));
  const ends = edges
    .filter((edge) => !edge.joined && edge.at >= joinAt)
    .map((leave) =>
      place === 0 || (leave.processed ?? 0) < place
        ? leave.at
        : leave.processedAt === undefined
          ? Infinity
          : Math.max(leave.at, leave.processedAt + PROCESSING_SKEW_MS),
    );
  const to = Math.min(...ends);
  return to > joinAt ? { from: joinAt, to } : undefined;
}

/**
 * How far back a member's changes still decide something: to the records' retention
 * (`retentionCutoff`, now minus TRAY_RETENTION_DAYS: posts older make no new record), and further
 * back to the oldest `countFrom` among the user's records. A record computed again (a removal, a
 * late leave) judges every action it counts from its countFrom on by the member's changes, and a
 * record lives on past the retention of its first actions while new ones come.
 */
export function pruneCutoff(retentionCutoff: number, oldestCountFrom: number | undefined): number {
  return oldestCountFrom === undefined ? retentionCutoff : Math.min(retentionCutoff, oldestCountFrom);
}

/**
 * How much earlier than its own time an action may have been processed (the platform's clock ahead
 * of the tray's, a transaction's delay): a change processed more than this before the cutoff was
 * processed before every action at or after the cutoff.
 */
export const PROCESSING_SKEW_MS = DAY_MS;

/**
 * The changes at or before `cutoff` (pruneCutoff) that decide nothing for an action at or after
 * it, whenever that action was or will be processed (memberFor, awayFor, the intervals from the
 * cutoff on). Such actions are all a record may still judge. Returned as the input's own objects.
 *
 * A change is settled when it was processed more than PROCESSING_SKEW_MS before the cutoff, so
 * before every such action (one without a processing time never is). A settled leave then stops
 * every join at or before it, for each of those actions, and settled joins differ only in the
 * leaves after them. Kept:
 * - every change at the newest old time, which holds the state at the cutoff (the intervals);
 * - the newest settled leave, and the newest settled join after it (the one no later leave stops
 *   more often than another), which keep memberFor and awayFor for every action;
 * - every change that is not settled: a leave processed late (after an action at or after the
 *   cutoff) takes nothing back from the joins before it, so those joins must stay while it may.
 *   Such changes are few, and they become settled once the cutoff moves past them.
 * The rest goes.
 */
export function prunableChanges<E extends MembershipEdge>(edges: readonly E[], cutoff: number): E[] {
  const old = edges.filter((edge) => edge.at <= cutoff);
  if (old.length < 2) return [];
  const newestOld = Math.max(...old.map((edge) => edge.at));
  const settled = old.filter(
    (edge) => edge.processedAt !== undefined && edge.processedAt < cutoff - PROCESSING_SKEW_MS,
  );
  const newestOf = (list: readonly E[]) =>
    list.reduce<E | undefined>(
      (newest, edge) => (newest === undefined || edge.at > newest.at ? edge : newest),
      undefined,
    );
  const lastLeave = newestOf(settled.filter((edge) => !edge.joined));
  const lastJoin = newestOf(
    settled.filter((edge) => edge.joined && (lastLeave === undefined || edge.at > lastLeave.at)),
  );
  return settled.filter((edge) => edge.at !== newestOld && edge !== lastLeave && edge !== lastJoin);
}

/**
 * Whether a join lets in an action at `at` processed at `processed`: the join is at or before it,
 * and no leave between them (one at the join's time included) was processed before the join or
 * before the action, whichever came last. A leave processed after both takes back nothing they made.
 */
function joinLetsIn(edges: readonly MembershipEdge[], join: MembershipEdge, at: number, processed: number) {
  const known = Math.max(join.processed ?? 0, processed);
  return (
    join.joined &&
    join.at <= at &&
    !edges.some(
      (edge) => !edge.joined && edge.at >= join.at && edge.at <= at && (edge.processed ?? 0) < known,
    )
  );
}

/**
 * A member for an action at `at` processed at `processed` (docs/tray-rules.md#leaving-and-rejoining-a-community):
 * some join of theirs lets it in (a leave processed late takes nothing back; a late join adds what
 * falls in its span by the leaves processed before it). With every change processed before the
 * action this is isMemberAt of their intervals.
 */
export function memberFor(edges: readonly MembershipEdge[], at: number, processed: number): boolean {
  return edges.some((join) => joinLetsIn(edges, join, at, processed));
}

/**
 * Away for an action on a community's target other than a post (a comment, a reaction, a reply or
 * a mention addressed to the member): not a member for it, and the tray knew, when the action was
 * processed, a change of the user at or before it (one processed before the action). A change
 * processed after it takes nothing back, a join included: a join processed after a late leave
 * once made every later computation count the action away, which the late leave itself never did
 * (docs/tray-rules.md#leaving-and-rejoining-a-community). A subset of isAwayAt(awaySpans(edges),
 * at), so an action outside every away span needs no look at the order.
 */
export function awayFor(edges: readonly MembershipEdge[], at: number, processed: number): boolean {
  return awayKnowing(edges, at, processed, false);
}

/**
 * Away for a community's post: not a member for it, and some join of the user at or before it
 * (whenever processed) or a leave processed before it. A post reaches members only: one the
 * fan-out did not give the user when it was processed (no join of theirs known before it) is
 * added by a late join only within that join's span (memberFor), never by the join's mere
 * existence. Also a subset of isAwayAt(awaySpans(edges), at).
 */
export function awayForPost(edges: readonly MembershipEdge[], at: number, processed: number): boolean {
  return awayKnowing(edges, at, processed, true);
}

/**
 * Not a member for the action, and a change at or before it known when it was processed: one
 * processed before it, or (`anyJoin`, a post's rule) any join whenever processed.
 */
function awayKnowing(edges: readonly MembershipEdge[], at: number, processed: number, anyJoin: boolean) {
  return (
    !memberFor(edges, at, processed) &&
    edges.some((edge) => edge.at <= at && ((anyJoin && edge.joined) || (edge.processed ?? 0) < processed))
  );
}

/** The away rule of an action by its verb: a community post's (awayForPost) or any other's (awayFor). */
export function awayForAction(
  edges: readonly MembershipEdge[],
  action: { verb: string; at: number },
  processed: number,
): boolean {
  return (action.verb === 'post' ? awayForPost : awayFor)(edges, action.at, processed);
}
