/**
 * How each table of the PostgreSQL schema would be placed in a Citus cluster, as docs/scaling.md
 * says: distribution-columns.test.ts holds the migrated schema to it, and
 * test/repository/scaling-storage-names.test.ts holds the page to it.
 *
 * The column each table would be distributed by: user_id for per-user tables, community_id for
 * community tables, target_id for what is kept once per target, the key of the events and of the
 * decisions, the owner of a block-list entry, the post of a removal's tombstone, the event key of
 * what a removal event changed (beside its stored event).
 */
export const distributedBy: Readonly<Record<string, string>> = {
  tray_records: 'user_id',
  tray_profiles: 'user_id',
  tray_last_read: 'user_id',
  tray_clears: 'user_id',
  user_bans: 'user_id',
  block_list: 'netid_uid',
  tray_target_actors: 'target_id',
  tray_group_actions: 'target_id',
  tray_removals: 'post_id',
  tray_removal_outcomes: 'event_key',
  tray_removal_changes: 'event_key',
  tray_membership_changes: 'community_id',
  tray_imported_members: 'community_id',
  tray_memberships: 'community_id',
  tray_member_away: 'community_id',
  tray_personal_actions: 'user_id',
  tray_mutes: 'user_id',
  tray_community_posts: 'community_id',
  stored_events: 'key',
  moderation_decisions: 'id',
};
/** Small tables every node would hold whole (Citus reference tables). */
export const referenceTables: readonly string[] = ['stored_event_minutes', 'stored_event_lag_minutes'];
/** Kept on the coordinator only, never distributed: the schema's own bookkeeping. */
export const localTables: readonly string[] = ['schema_migrations'];
