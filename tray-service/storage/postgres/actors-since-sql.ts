/**
 * How many of a group's actors a record counts from its countFrom on (docs/postgres-tray-records.md):
 * the group's actor times are read once per statement, in order (`actorTimesSql`, into a summary
 * CTE with `total`, `min_at` and `ats`), and each record's count is a binary search of them
 * (`width_bucket`: how many are <= countFrom - 1), not a count per record, which read every actor
 * since its countFrom for each member (BENCHMARKS.md, "A community with posts from before its
 * members joined").
 */

/** Every actor's time of the group `verb`, `target` (SQL expressions), in order: `ats`. */
export const actorTimesSql = (verb: string, target: string): string =>
  `(SELECT coalesce(array_agg(c.at ORDER BY c.at), '{}') FROM tray_target_actors c
    WHERE c.target_id = ${target} AND c.verb = ${verb})`;

/**
 * The record's count, its recipient's own entry (`own`, joined by the caller) left out. The
 * summary is read in place by a subquery: joined in, the array would be carried through the
 * statement's sorts, one copy per member. A record counting from before the oldest actor counts
 * them all, without the subquery.
 */
export const actorsSinceSql = (ref: {
  summary: string;
  countFrom: string;
  verb: string;
  target: string;
  own: string;
}): string =>
  `(CASE WHEN ${ref.countFrom} <= ${ref.summary}.min_at THEN ${ref.summary}.total
         ELSE (SELECT b.total - width_bucket(${ref.countFrom} - 1, b.ats) FROM ${ref.summary} AS b
               WHERE b.verb = ${ref.verb} AND b.target_id = ${ref.target}) END)
   - (CASE WHEN ${ref.own}.at >= ${ref.countFrom} THEN 1 ELSE 0 END)`;
