import { expect } from 'chai';
import { toEventView, type EventView } from '../../../tray-service/admin/event-view.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { applyJob } from '../../../tray-service/use-cases/apply-job.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { dayOfEvents } from './day-of-events.ts';
import { readAll, useWorker } from './worker-harness.ts';

/** The trays of `users` as readers see them, without the tray's own clock (unreadAt, changedAt). */
async function trays(storage: TrayStorage, users: readonly string[]) {
  const all = await Promise.all(users.map((user) => readAll(storage, user)));
  return all.flat().map(({ unreadAt: _unreadAt, changedAt: _changedAt, ...visible }) => visible);
}

// Stored events are the tray's source of truth: a deployment rebuilt from an export (the shape of
// GET /admin/events/export and `npm run export-events`) must come back with the same trays.
describe('tray worker: replaying a day of stored events into an empty tray', function () {
  this.timeout(180_000);
  const worker = useWorker();
  const empty = useTrayStorage();

  it('reproduces the trays', async () => {
    const day = dayOfEvents(160);
    // Every user id the day names (ids of the builders all start with `u-`).
    const users = [...new Set(JSON.stringify(day).match(/\bu-[A-Za-z0-9-]+/g) ?? [])].sort();
    for (const { envelope, receivedAt } of day) await worker.deliver(envelope, { receivedAt });
    const live = await trays(worker.storage, users);
    expect(live.filter((record) => record.verb === 'post').length, 'community post records').to.be.above(5);
    expect(new Set(live.map((record) => record.verb))).to.include.members(['post', 'comment', 'reaction']);

    // The export, as the file holds it (JSON lines), newest first.
    const exported: EventView[] = [];
    for await (const event of worker.storage.events.stream({})) {
      exported.push(JSON.parse(JSON.stringify(toEventView(event))) as EventView);
    }
    expect(exported).to.have.length(new Set(day.map(({ envelope }) => JSON.stringify(envelope))).size);
    expect(await trays(empty.storage, users)).to.deep.equal([]);

    for (const view of [...exported].reverse()) {
      await applyJob(
        {
          dedupeKey: view.key,
          webhook: view.webhook,
          receivedAt: view.receivedAt,
          event: view.event,
          data: view.data,
        },
        {
          storage: empty.storage,
          eventsRetentionDays: 30,
          trayRetentionDays: 90,
          networkId: 'default',
          publishBans: async () => {},
        },
      );
    }
    expect(await trays(empty.storage, users)).to.deep.equal(live);
  });
});
