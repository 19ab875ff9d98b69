-- A leave processed late takes nothing back (docs/tray-rules.md#leaving-and-rejoining-a-community):
-- an action on a community's target counts for a member unless a leave covering its time was
-- processed before it (and before the join that let it in). What that needs: the order in which
-- the tray processed its membership changes and its kept actions, one sequence for both.
CREATE SEQUENCE tray_processed START 2;

-- Rows stored before this version: every change as processed before every kept action (0 < 1),
-- which is the order the records they made were computed in (a leave then took back what it
-- covered, so those records count nothing of a time away). Adding a column with a constant
-- default rewrites no table, whatever its size; only rows inserted from now on take the sequence.
ALTER TABLE tray_membership_changes ADD COLUMN processed bigint NOT NULL DEFAULT 0;
ALTER TABLE tray_membership_changes ALTER COLUMN processed SET DEFAULT nextval('tray_processed');
ALTER TABLE tray_personal_actions ADD COLUMN processed bigint NOT NULL DEFAULT 1;
ALTER TABLE tray_personal_actions ALTER COLUMN processed SET DEFAULT nextval('tray_processed');
ALTER TABLE tray_community_posts ADD COLUMN processed bigint NOT NULL DEFAULT 1;
ALTER TABLE tray_community_posts ALTER COLUMN processed SET DEFAULT nextval('tray_processed');

-- User `u`'s joins and leaves in community `c` with their places: an imported membership is a join
-- at `since` and one at `as_of`, processed before everything. Reads the user's few changes by the
-- primary key (inlined into its callers).
CREATE FUNCTION tray_membership_edges(c text, u text)
RETURNS TABLE (at bigint, joined boolean, processed bigint)
LANGUAGE sql STABLE AS $$
  SELECT m.at, m.joined, m.processed FROM tray_membership_changes m
  WHERE m.community_id = c AND m.user_id = u
  UNION ALL
  SELECT x.at, true, 0::bigint FROM tray_imported_members i
  CROSS JOIN LATERAL (VALUES (i.since), (i.as_of)) AS x(at)
  WHERE i.community_id = c AND i.user_id = u
$$;

-- Whether user `u` is a member of community `c` for an action at `at` processed at `processed`
-- (memberFor of docs/tray-engine.md#membership-by-time): some join of theirs at or before it with
-- no leave between the two processed before both the join and the action. A post's fan-out asks it
-- of those the memberships leave out at the post's time only when a leave of theirs covering the
-- post was processed after the post took its place (tray_membership_changes_late_leaves): such a
-- leave takes nothing back, from the first delivery (stored between the post's keep and its
-- fan-out) or a redelivery alike.
CREATE FUNCTION tray_member_for(c text, u text, at bigint, processed bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
  WITH e AS (SELECT * FROM tray_membership_edges(c, u))
  SELECT EXISTS (
    SELECT 1 FROM e j WHERE j.joined AND j.at <= tray_member_for.at
      AND NOT EXISTS (SELECT 1 FROM e l
                      WHERE NOT l.joined AND l.at >= j.at AND l.at <= tray_member_for.at
                        AND l.processed < greatest(j.processed, tray_member_for.processed)))
$$;

-- Whether user `u` was away from community `c` for an action at `at` processed at `processed`
-- (awayFor of docs/tray-engine.md#membership-by-time): not a member for it (tray_member_for), and
-- the tray knew then some change of theirs at or before it (any join, or a leave processed before
-- the action). Callers ask it only of actions inside one of the user's away spans
-- (tray_member_away), a superset of these.
CREATE FUNCTION tray_away_for(c text, u text, at bigint, processed bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM tray_membership_edges(c, u) e WHERE e.at <= tray_away_for.at
                   AND (e.joined OR e.processed < tray_away_for.processed))
     AND NOT tray_member_for(c, u, tray_away_for.at, tray_away_for.processed)
$$;

-- A fan-out's leaves processed after its posts took their places, by community: for a post kept
-- just now, none or those stored in the moment since, whatever the size of the community. Leaves
-- only, and rows from before this version are all at 0 (below any post's place).
CREATE INDEX tray_membership_changes_late_leaves ON tray_membership_changes (community_id, processed)
  WHERE NOT joined;
