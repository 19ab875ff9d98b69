-- The writes leave deleted users out (upsert-group-records.ts): each fan-out anti-joins its members
-- with the deleted profiles, and each personal write looks its recipients and actors up. Deleted
-- users are few among the profiles, so the planner reads them from this index (a hash of them for a
-- fan-out of thousands) instead of probing tray_profiles once per member or scanning it whole.
CREATE INDEX tray_profiles_deleted ON tray_profiles (user_id) WHERE deleted;
