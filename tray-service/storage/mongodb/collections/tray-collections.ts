import type { CollectionSpec } from './collection-spec.ts';
import { moderationDecisionsCollection } from './moderation-decisions-collection.ts';
import { blockListCollection } from './block-list-collection.ts';
import { eventLagMinutesCollection, eventMinutesCollection } from './event-minutes-collection.ts';
import { eventsCollection } from './events-collection.ts';
import { membershipChangesCollection } from './membership-changes-collection.ts';
import { membershipsCollection } from './memberships-collection.ts';
import { trayClearsCollection } from './tray-clears-collection.ts';
import { trayMigrationsCollection } from './tray-migrations-collection.ts';
import { trayReadStateCollection } from './tray-read-state-collection.ts';
import { trayRecordClaimsCollection } from './tray-record-claims-collection.ts';
import { trayRecordsCollection } from './tray-records-collection.ts';
import { trayTargetActionsCollection } from './tray-target-actions-collection.ts';
import { trayTargetActorsCollection } from './tray-target-actors-collection.ts';
import { userBansCollection } from './user-bans-collection.ts';
import { trayMutesCollection } from './tray-mutes-collection.ts';
import { trayWriteLocksCollection } from './tray-write-locks-collection.ts';
import { userProfilesCollection } from './user-profiles-collection.ts';
import { processingOrderCollection } from './processing-order-collection.ts';
import { trayRemovalsCollection } from './tray-removals-collection.ts';
import { trayRemovalWorkCollection } from './tray-removal-work-collection.ts';
import {
  trayRemovalChangesCollection,
  trayRemovalOutcomesCollection,
} from './tray-removal-outcomes-collection.ts';

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
