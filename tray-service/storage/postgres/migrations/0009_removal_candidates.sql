-- A removal of a comment or reaction reads only the actions it is, by its post and id
-- (apply-removals.ts), instead of every kept action of the post. The index keeps post_id first,
-- so a deleted post's actions are still one range of it, and replaces the post_id index.
CREATE INDEX tray_group_actions_post_action ON tray_group_actions (post_id, action_id);
DROP INDEX tray_group_actions_post;
