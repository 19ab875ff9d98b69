import { expect } from 'chai';
import type { WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import {
  EVENTS,
  MEMBERSHIPS,
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
  TRAY_TARGET_ACTORS,
  USER_PROFILES,
  type TrayRecordDoc,
} from '../../../shared/tray/tray-record.ts';
import { toEventView, type EventView } from '../../../tray-service/admin/event-view.ts';
import { USER_BAN_CHANGES } from '../../../tray-service/storage/mongodb/ban-store.ts';
import { createEventsQueries } from '../../../tray-service/storage/mongodb/events-queries.ts';
import { MEMBERSHIP_CHANGES } from '../../../tray-service/storage/mongodb/membership-store.ts';
import { processJob } from '../../../tray-service/worker/process-job.ts';
import { dayOfEvents } from './day-of-events.ts';
import { useWorker } from './worker-harness.ts';

const TRAY_COLLECTIONS = [
  TRAY_RECORDS,
  TRAY_RECORD_CLAIMS,
  TRAY_TARGET_ACTORS,
  MEMBERSHIPS,
  MEMBERSHIP_CHANGES,
  USER_PROFILES,
  USER_BAN_CHANGES,
  EVENTS,
];

/** The trays as readers see them, without the tray's own clock (version, unreadAt, changedAt). */
async function trays(worker: ReturnType<typeof useWorker>) {
  const records = await worker.db.collection<TrayRecordDoc>(TRAY_RECORDS).find({}).sort({ _id: 1 }).toArray();
  return records.map(
    ({ version: _version, unreadAt: _unreadAt, changedAt: _changedAt, ...visible }) => visible,
  );
}

// Stored events are the tray's source of truth: a deployment rebuilt from an export (the shape of
// GET /admin/events/export and `npm run export-events`) must come back with the same trays.
describe('tray worker: replaying a day of stored events into an empty tray', function () {
  this.timeout(180_000);
  const worker = useWorker();

  it('reproduces the trays', async () => {
    const day = dayOfEvents(160);
    for (const { envelope, receivedAt } of day) await worker.deliver(envelope, { receivedAt });
    const live = await trays(worker);
    expect(live.filter((record) => record.verb === 'post').length, 'community post records').to.be.above(5);
    expect(new Set(live.map((record) => record.verb))).to.include.members(['post', 'comment', 'reaction']);

    // The export, as the file holds it (JSON lines), newest first.
    const exported = (await createEventsQueries(worker.db).openCursor({}).toArray()).map(
      (doc) => JSON.parse(JSON.stringify(toEventView(doc))) as EventView,
    );
    expect(exported).to.have.length(new Set(day.map(({ envelope }) => JSON.stringify(envelope))).size);
    for (const name of TRAY_COLLECTIONS) await worker.db.collection(name).deleteMany({});
    expect(await trays(worker)).to.deep.equal([]);

    const storedOrder = [...exported].reverse();
    for (const view of storedOrder) {
      const job: WebhookJobData = {
        dedupeKey: view.key,
        webhook: view.webhook,
        receivedAt: view.receivedAt,
        event: view.event,
        data: view.data,
      };
      await processJob(worker.db, job, { eventsRetentionDays: 30, trayRetentionDays: 90, fanOutBatch: 1000 });
    }
    expect(await trays(worker)).to.deep.equal(live);
  });
});
