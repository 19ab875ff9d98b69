-- Every member list's time is a join of its own, processed before everything
-- (docs/tray-engine.md#membership-by-time): a list naming a member again adds its time and keeps
-- those of the lists before it. One as_of per member was moved by each later list, which took back
-- the membership an earlier list had restored; and a list naming a current member stored nothing,
-- so a leave dated before it stood or not by whether it arrived before the import or after.
-- relisted_at: the times of the other lists that named the member, each time once (as_of, the
-- first list's, not among them); one element per distinct list time. A constant default rewrites
-- no table, whatever its size, and leaves every row as it read before: joins at since and as_of.
ALTER TABLE tray_imported_members ADD COLUMN relisted_at bigint[] NOT NULL DEFAULT '{}';

-- User `u`'s joins and leaves in community `c` with their places: an imported membership is a join
-- at `since`, one at `as_of` and one at each `relisted_at`, all processed before everything. Reads
-- the user's few changes by the primary key (inlined into its callers).
CREATE OR REPLACE FUNCTION tray_membership_edges(c text, u text)
RETURNS TABLE (at bigint, joined boolean, processed bigint)
LANGUAGE sql STABLE AS $$
  SELECT m.at, m.joined, m.processed FROM tray_membership_changes m
  WHERE m.community_id = c AND m.user_id = u
  UNION ALL
  SELECT x.at, true, 0::bigint FROM tray_imported_members i
  CROSS JOIN LATERAL unnest(ARRAY[i.since, i.as_of] || i.relisted_at) AS x(at)
  WHERE i.community_id = c AND i.user_id = u
$$;
