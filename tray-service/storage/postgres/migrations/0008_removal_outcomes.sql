-- What each removal event changed in the trays (docs/operations.md#what-a-removal-changed),
-- written in the transaction that applies the removal, so it stays exact whatever changes later:
-- the counts of every change, and the first changes in (user, key) order with each record's
-- counts before and after. A deleted post may change 100,000 trays; only the first 1,000 are
-- listed, so a removal's rows stay bounded. Kept for the records' retention.
CREATE TABLE tray_removal_outcomes (
  event_key text COLLATE "C" PRIMARY KEY,
  voided integer NOT NULL,
  shrunk integer NOT NULL,
  replaced integer NOT NULL,
  removed integer NOT NULL,
  listed integer NOT NULL,
  expires_at bigint NOT NULL
);
-- purgeExpiredRecords.
CREATE INDEX tray_removal_outcomes_expiry ON tray_removal_outcomes (expires_at);

-- The listed changes; the primary key serves the detail's pages (event_key, then user and key).
CREATE TABLE tray_removal_changes (
  event_key text COLLATE "C" NOT NULL,
  user_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  change text NOT NULL,
  before jsonb NOT NULL,
  after jsonb,
  expires_at bigint NOT NULL,
  PRIMARY KEY (event_key, user_id, key)
);
-- purgeExpiredRecords.
CREATE INDEX tray_removal_changes_expiry ON tray_removal_changes (expires_at);
