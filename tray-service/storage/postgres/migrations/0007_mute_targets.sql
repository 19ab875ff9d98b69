-- Mutes judged inside the write statements (held-back-sql.ts): a fan-out or a grouped write reads
-- the mute spans on its activities' targets (their actors, posts and community, and the actors and
-- posts of their record groups) by target, then anti-joins its recipients against them by user.
-- The primary key leads with user_id, so only this index finds a target's mutes without reading
-- every user's: a post to 10,000 members of whom 1,000 mute the community reads those 1,000 rows.
CREATE INDEX tray_mutes_target ON tray_mutes (target_type, target_id)
  INCLUDE (user_id, created_at, until_at, removed_at);
