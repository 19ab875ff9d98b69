-- The membership changes an earlier rolling upgrade left without `processed_at` (0022) take this
-- upgrade's time, as 0018 gave the rows before it: later than they were processed, so the prune
-- keeps them until its cutoff is a day past it. One read of the table, in a migration of its own
-- so that only the rows it sets are locked (none on a database upgraded while no older worker ran):
-- run beside 0022's ALTER, that lock on the table held reads and writes back for the whole read.
-- A database that ran 0022 when it held this update too finds nothing left to set.
UPDATE tray_membership_changes
  SET processed_at = (extract(epoch FROM now()) * 1000)::bigint
  WHERE processed_at IS NULL;
