/** The MongoDB adapter's collections (each one's indexes are declared in its *-collection.ts). */
export const TRAY_RECORDS = 'tray_records';
export const MEMBERSHIPS = 'community_members';
export const USER_PROFILES = 'user_profiles';
export const EVENTS = 'events';
/** Internal (worker only): write claims that make compare-and-set safe on FerretDB (claim-versions.ts). */
export const TRAY_RECORD_CLAIMS = 'tray_record_claims';
/** Internal (worker only): the distinct actors of each record group, kept once per target (target-actors-store.ts). */
export const TRAY_TARGET_ACTORS = 'tray_target_actors';
