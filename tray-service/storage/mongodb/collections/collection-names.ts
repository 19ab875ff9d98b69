/**
 * Every collection of the MongoDB adapter, by the folder that owns its reads and writes. Each one's
 * document type and indexes (each naming the query it serves) are in its `*-collection.ts` here,
 * below every folder that uses them; tray-collections.ts lists them for start-up.
 */

// records/: the tray's records as readers see them, and the per-user times they are read against.
export const TRAY_RECORDS = 'tray_records';
/** Each user's last-read times (POST v2/last-read). */
export const TRAY_READ_STATE = 'tray_read_state';
/** Each user's delete-all times (what a reconnecting live stream is told). */
export const TRAY_CLEARS = 'tray_clears';
/** Completed one-time migrations of the records' shape (one document each). */
export const TRAY_MIGRATIONS = 'tray_migrations';

// mutes/: every user's mute spans, in force and ended (docs/tray-rules.md#inbox).
export const TRAY_MUTES = 'tray_mutes';
/** Each user's mute lock, held while a PUT or DELETE of the user's mutes reads and writes (mute-lock.ts). */
/** Named when it held the mutes' locks alone; kept, so processes of either version share their locks. */
export const TRAY_WRITE_LOCKS = 'tray_mute_locks';

// grouping/: what the worker computes records from.
/** The distinct actors of each record group, kept once per target (target-actors.ts). */
export const TRAY_TARGET_ACTORS = 'tray_target_actors';
/** Every counted action of the retention window, with its time and post (target-actions.ts). */
export const TRAY_TARGET_ACTIONS = 'tray_target_actions';
export const USER_PROFILES = 'user_profiles';
/** The blocks of places in the order joins, leaves and kept actions were processed in (processing-order.ts). */
export const TRAY_PROCESSING_ORDER = 'tray_processing_order';

// removals/: deleted posts, comments and reactions (docs/tray-rules.md#inbox).
/** One tombstone per removal: the actions it voids are no-ops whenever they arrive (tombstones.ts). */
export const TRAY_REMOVALS = 'tray_removals';
/** The record groups a removal took actions out of, until their records are computed again. */
export const TRAY_REMOVAL_WORK = 'tray_removal_work';
/** What each removal event changed: its counts (one document per event)... */
export const TRAY_REMOVAL_OUTCOMES = 'tray_removal_outcomes';
/** ...and its first changes, listed (removal-outcomes.ts). */
export const TRAY_REMOVAL_CHANGES = 'tray_removal_changes';

// compare-and-set/: the write protocol's version claims (claim-versions.ts).
export const TRAY_RECORD_CLAIMS = 'tray_record_claims';

// memberships/: joins and leaves as change documents, and imported memberships.
export const MEMBERSHIP_CHANGES = 'community_member_changes';
export const MEMBERSHIPS = 'community_members';

// events/: every delivery once, and the events console's per-minute rollups.
export const EVENTS = 'events';
export const EVENT_MINUTES = 'event_minutes';
export const EVENT_LAG_MINUTES = 'event_lag_minutes';

// moderation/: decisions of the rules, and global bans.
export const MODERATION_DECISIONS = 'moderation_decisions';
export const USER_BAN_CHANGES = 'user_ban_changes';

// block-list/: the legacy block API.
export const BLOCK_LIST = 'block_list';
