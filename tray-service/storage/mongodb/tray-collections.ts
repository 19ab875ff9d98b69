import type { CollectionSpec } from './setup/collection-spec.ts';
import { moderationDecisionsCollection } from './moderation/moderation-decisions-collection.ts';
import { blockListCollection } from './block-list/block-list-collection.ts';
import { eventLagMinutesCollection, eventMinutesCollection } from './events/event-minutes-collection.ts';
import { eventsCollection } from './events/events-collection.ts';
import { membershipChangesCollection } from './memberships/membership-changes-collection.ts';
import { membershipsCollection } from './memberships/memberships-collection.ts';
import { trayClearsCollection } from './records/tray-clears-collection.ts';
import { trayMigrationsCollection } from './records/tray-migrations-collection.ts';
import { trayReadStateCollection } from './records/tray-read-state-collection.ts';
import { trayRecordClaimsCollection } from './compare-and-set/tray-record-claims-collection.ts';
import { trayRecordsCollection } from './records/tray-records-collection.ts';
import { trayTargetActionsCollection } from './grouping/tray-target-actions-collection.ts';
import { trayTargetActorsCollection } from './grouping/tray-target-actors-collection.ts';
import { userBansCollection } from './moderation/user-bans-collection.ts';
import { trayMutesCollection } from './mutes/tray-mutes-collection.ts';
import { trayWriteLocksCollection } from './locks/tray-write-locks-collection.ts';
import { userProfilesCollection } from './grouping/user-profiles-collection.ts';
import { processingOrderCollection } from './memberships/processing-order-collection.ts';
import { trayRemovalsCollection } from './removals/tray-removals-collection.ts';
import { trayRemovalWorkCollection } from './removals/tray-removal-work-collection.ts';
import {
  trayRemovalChangesCollection,
  trayRemovalOutcomesCollection,
} from './removals/tray-removal-outcomes-collection.ts';

/** The collections the worker writes and reads (startWorker ensures them when run on its own). */
export const workerCollections: readonly CollectionSpec[] = [
  trayRecordsCollection,
  membershipsCollection,
  membershipChangesCollection,
  eventsCollection,
  eventMinutesCollection,
  eventLagMinutesCollection,
  trayRecordClaimsCollection,
  trayTargetActorsCollection,
  trayTargetActionsCollection,
  processingOrderCollection,
  trayRemovalsCollection,
  trayRemovalWorkCollection,
  trayRemovalOutcomesCollection,
  trayRemovalChangesCollection,
  trayMutesCollection,
  userProfilesCollection,
  userBansCollection,
  trayMigrationsCollection,
];

/** The collections the tray API and the admin API read. */
export const apiCollections: readonly CollectionSpec[] = [
  trayRecordsCollection,
  trayMutesCollection,
  trayWriteLocksCollection,
  blockListCollection,
  trayReadStateCollection,
  trayClearsCollection,
  eventsCollection,
  eventMinutesCollection,
  eventLagMinutesCollection,
  moderationDecisionsCollection,
  trayRemovalOutcomesCollection,
  trayRemovalChangesCollection,
];

/** Every collection of the tray service: its one start-up call (tray-service/main.ts). */
export const trayCollections: readonly CollectionSpec[] = [
  ...new Set([...workerCollections, ...apiCollections]),
];
