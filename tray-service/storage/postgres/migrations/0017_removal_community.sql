-- The community a deleted post was on: its `post` records are where the post would land again if it
-- arrived after its removal (a replay, a spool drained late), so the purge keeps the tombstone as
-- long as that group can live (purge-expired-records.ts). A nullable column with no default: no
-- table rewrite. Tombstones stored before have none and are kept while their post's thread is.
ALTER TABLE tray_removals ADD COLUMN community_id text COLLATE "C";
