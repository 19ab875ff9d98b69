-- A deleted user's snapshots carry a `deleted` mark besides the name `Deleted user`
-- (docs/messages.md#deleted-users): a message names them in the reader's language, and a live
-- user who calls themselves `Deleted user` keeps their name. The tables keeping snapshots as
-- columns keep the mark as one; those keeping activities as JSON keep it in the actor.
ALTER TABLE tray_target_actors ADD COLUMN actor_deleted boolean NOT NULL DEFAULT false;
ALTER TABLE tray_group_actions ADD COLUMN actor_deleted boolean NOT NULL DEFAULT false;

-- The snapshots deletions rewrote before the mark existed: marked now, from the deleted profiles
-- (few, by tray_profiles_deleted). tray_records has no index by actor, so its rows are found by one
-- scan, as a deletion finds them; changed_at does not move: the record's fields are the same, only
-- its message reads differently.
UPDATE tray_target_actors AS t SET actor_deleted = true
FROM tray_profiles AS gone WHERE gone.deleted AND gone.user_id = t.actor_id;
UPDATE tray_group_actions AS t SET actor_deleted = true
FROM tray_profiles AS gone WHERE gone.deleted AND gone.user_id = t.actor_id;
UPDATE tray_personal_actions AS t SET activity = jsonb_set(t.activity, '{actor,deleted}', 'true')
FROM tray_profiles AS gone WHERE gone.deleted AND gone.user_id = t.actor_id;
UPDATE tray_community_posts AS t SET activity = jsonb_set(t.activity, '{actor,deleted}', 'true')
FROM tray_profiles AS gone WHERE gone.deleted AND gone.user_id = t.actor_id;
UPDATE tray_records AS r SET actors = (
    SELECT jsonb_agg(CASE WHEN gone.user_id IS NULL THEN e ELSE e || '{"deleted": true}' END ORDER BY o)::json
    FROM jsonb_array_elements(r.actors::jsonb) WITH ORDINALITY AS x(e, o)
    LEFT JOIN tray_profiles AS gone ON gone.deleted AND gone.user_id = e->>'userId')
WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(r.actors::jsonb) AS e
              JOIN tray_profiles AS gone ON gone.deleted AND gone.user_id = e->>'userId'
              WHERE NOT e ? 'deleted');
