-- tray_away_for counts any join at or before an action as a change the tray knew when the action
-- was processed, a join processed after it included. Right for a community's post (it reaches
-- members only: a late join adds it only within the join's span), wrong for every other action on
-- a community's target: a join processed after a late leave made every later computation of the
-- record count such an action away, which the late leave itself never did (docs/tray-rules.md: a
-- leave processed late takes nothing back, nor does any later computation). Those actions are
-- judged by this function now, which counts only changes processed before the action (awayFor in
-- the domain; tray_away_for stays as the posts' rule, awayForPost).
CREATE FUNCTION tray_away_for_action(c text, u text, at bigint, processed bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM tray_membership_edges(c, u) e WHERE e.at <= tray_away_for_action.at
                   AND e.processed < tray_away_for_action.processed)
     AND NOT tray_member_for(c, u, tray_away_for_action.at, tray_away_for_action.processed)
$$;
