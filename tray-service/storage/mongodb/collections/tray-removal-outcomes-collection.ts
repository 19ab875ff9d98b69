import type { RemovalOutcome, RemovalTrayChange } from '../../../domain/removal-tray-change.ts';
import { EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_REMOVAL_CHANGES, TRAY_REMOVAL_OUTCOMES } from './collection-names.ts';

/** tray_removal_outcomes: what one removal event changed, counted (removal-outcomes.ts). */
export const trayRemovalOutcomesCollection: CollectionSpec = {
  name: TRAY_REMOVAL_OUTCOMES,
  indexes: [EXPIRY_INDEX],
};

/** tray_removal_changes: the first changes of each removal event, listed. */
export const trayRemovalChangesCollection: CollectionSpec = {
  name: TRAY_REMOVAL_CHANGES,
  indexes: [
    {
      name: 'change_event',
      key: { eventKey: 1, position: 1 },
      serves:
        'find({eventKey, position > after}).sort({position}) in changes: a page of the changes an event made',
    },
    EXPIRY_INDEX,
  ],
};

/** One removal event's counts, added to by each application of it. */
export interface RemovalOutcomeDoc extends RemovalOutcome {
  /** The stored event's key. */
  _id: string;
  expiresAt: Date;
}

/** One listed change; insert-only, so a retried application lists nothing twice. */
export interface RemovalChangeDoc extends RemovalTrayChange {
  /** JSON [eventKey, userId, key]. */
  _id: string;
  eventKey: string;
  /** userId, U+0001, key: one field in (user, key) order, so a page is one range on the index. */
  position: string;
  expiresAt: Date;
}
