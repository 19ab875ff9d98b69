import type { CollectionSpec } from './collection-spec.ts';
import { TRAY_MIGRATIONS } from './collection-names.ts';

/** tray_migrations: one document per one-time migration done (read by `_id` at worker start). */
export const trayMigrationsCollection: CollectionSpec = {
  name: TRAY_MIGRATIONS,
  indexes: [],
};
