-- The inbox extensions (docs/tray-rules.md#inbox): seen, archived and snoozed records, and mutes.
-- "In the inbox" is stored (a generated column), never compared with the clock, so partial indexes
-- serve both counts exactly: archiving and snoozing clear it, a wake-up and new activity set it.

-- Records that exist before this feature start seen as they are read.
ALTER TABLE tray_records
  ADD COLUMN is_seen boolean NOT NULL DEFAULT false,
  ADD COLUMN archived_at bigint,
  ADD COLUMN snoozed_until bigint,
  ADD COLUMN in_inbox boolean NOT NULL GENERATED ALWAYS AS (archived_at IS NULL AND snoozed_until IS NULL) STORED;
UPDATE tray_records SET is_seen = has_read WHERE has_read;

-- The unread count of the inbox (and the read marks of inbox records): replaces tray_records_unread.
CREATE INDEX tray_records_inbox_unread ON tray_records (user_id, unread_at) INCLUDE (expires_at)
  WHERE NOT has_read AND in_inbox;
DROP INDEX tray_records_unread;
-- mark-all-as-read of the unread records out of the inbox (few: archived or snoozed while unread).
CREATE INDEX tray_records_away_unread ON tray_records (user_id) INCLUDE (expires_at)
  WHERE NOT has_read AND NOT in_inbox;
-- The unseen count of the inbox, and seen/last-read marks.
CREATE INDEX tray_records_inbox_unseen ON tray_records (user_id, unread_at) INCLUDE (expires_at)
  WHERE NOT is_seen AND in_inbox;
-- Pages of the inbox view (v3 default, v2): newest first, past archived and snoozed ones unread.
CREATE INDEX tray_records_inbox_page ON tray_records (user_id, last_update DESC, key DESC) INCLUDE (expires_at, verb)
  WHERE in_inbox;
-- Pages of the archived view.
CREATE INDEX tray_records_archived_page ON tray_records (user_id, last_update DESC, key DESC) INCLUDE (expires_at)
  WHERE archived_at IS NOT NULL;
-- Pages of the snoozed view.
CREATE INDEX tray_records_snoozed_page ON tray_records (user_id, last_update DESC, key DESC) INCLUDE (expires_at)
  WHERE snoozed_until IS NOT NULL;
-- The wake-up: due snoozes, oldest end first, claimed FOR UPDATE SKIP LOCKED.
CREATE INDEX tray_records_snooze_due ON tray_records (snoozed_until) WHERE snoozed_until IS NOT NULL;

-- Every span of every user's mutes (domain/mute.ts): in force from created_at until until_at
-- passes or removed_at; ended spans are kept for the records' retention (expires_at), so a late
-- delivery dated inside one stays held back. Per user (distribution column user_id).
CREATE TABLE tray_mutes (
  user_id text COLLATE "C" NOT NULL,
  target_type text NOT NULL CHECK (target_type IN ('post', 'community', 'user')),
  target_id text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  until_at bigint,
  removed_at bigint,
  expires_at bigint NOT NULL,
  PRIMARY KEY (user_id, target_type, target_id, created_at)
);
-- (The primary key serves a user's list, the span of one target in force, and the fan-out's
-- look-up of a member's mutes of one target.)
-- purgeExpiredRecords.
CREATE INDEX tray_mutes_expiry ON tray_mutes (expires_at);
