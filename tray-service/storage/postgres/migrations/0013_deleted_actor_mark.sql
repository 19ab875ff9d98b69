-- A deleted user's snapshots carry a `deleted` mark besides the name `Deleted user`
-- (docs/messages.md#deleted-users): a message names them in the reader's language, and a live
-- user who calls themselves `Deleted user` keeps their name. The tables keeping snapshots as
-- columns keep the mark as one; those keeping activities as JSON keep it in the actor.
--
-- The snapshots deletions rewrote before the mark existed are marked from the deleted profiles.
-- The statements that need no new column come first: the ADD COLUMNs take ACCESS EXCLUSIVE on
-- tray_target_actors and tray_group_actions, which every write of the worker updates, and hold
-- it until this migration commits, so only the last, short statements run under it and a
-- still-running earlier instance's writes wait that long only (docs/storage.md).

-- tray_records has no index by actor: its rows are read by one scan, as a deletion finds them.
-- Each actor looks up its own profile (a scalar subquery, by the primary key): joined instead,
-- PostgreSQL hashes every deleted profile for every record, a cost that grows with the number of
-- users ever deleted. A deletion always wrote its snapshots named `Deleted user`
-- (DELETED_USER_NAME), so a record whose text does not hold that name names no deleted user and
-- is passed over without parsing it; the look-up still decides, so a live user of that name is
-- not marked. changed_at does not move: the record's fields are the same, only its message reads
-- differently.
UPDATE tray_records AS r SET actors = (
    SELECT jsonb_agg(CASE WHEN NOT e ? 'deleted'
                            AND (SELECT gone.deleted FROM tray_profiles AS gone WHERE gone.user_id = e->>'userId')
                          THEN e || '{"deleted": true}' ELSE e END ORDER BY o)::json
    FROM jsonb_array_elements(r.actors::jsonb) WITH ORDINALITY AS x(e, o))
WHERE r.actors::text LIKE '%"Deleted user"%'
  AND EXISTS (SELECT 1 FROM jsonb_array_elements(r.actors::jsonb) AS e
              WHERE NOT e ? 'deleted'
                AND (SELECT gone.deleted FROM tray_profiles AS gone WHERE gone.user_id = e->>'userId'));
UPDATE tray_personal_actions AS t SET activity = jsonb_set(t.activity, '{actor,deleted}', 'true')
FROM tray_profiles AS gone WHERE gone.deleted AND gone.user_id = t.actor_id;
UPDATE tray_community_posts AS t SET activity = jsonb_set(t.activity, '{actor,deleted}', 'true')
FROM tray_profiles AS gone WHERE gone.deleted AND gone.user_id = t.actor_id;

-- The columns (a default, no rewrite), then their marks (few rows, by tray_profiles_deleted).
ALTER TABLE tray_target_actors ADD COLUMN actor_deleted boolean NOT NULL DEFAULT false;
ALTER TABLE tray_group_actions ADD COLUMN actor_deleted boolean NOT NULL DEFAULT false;
UPDATE tray_target_actors AS t SET actor_deleted = true
FROM tray_profiles AS gone WHERE gone.deleted AND gone.user_id = t.actor_id;
UPDATE tray_group_actions AS t SET actor_deleted = true
FROM tray_profiles AS gone WHERE gone.deleted AND gone.user_id = t.actor_id;
