import { expect } from 'chai';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import { InvalidUntilError } from '../../../tray-service/domain/invalid-until-error.ts';
import type { InboxMark } from '../../../tray-service/storage/port.ts';
import { markInbox } from '../../../tray-service/use-cases/mark-inbox.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';

const NOW = Date.UTC(2026, 0, 15, 12);

describe('markInbox (POST v3/records/*, every transport)', () => {
  const suite = useTrayStorage();

  /** The changes the use case announced, each mark with its records. */
  function announced() {
    const marks: [InboxMark, readonly InboxRecord[]][] = [];
    return {
      marks,
      inboxMarked: async (mark: InboxMark, records: readonly InboxRecord[]) =>
        void marks.push([mark, records]),
    };
  }

  describe('a snooze', () => {
    const refused: [string, number, string][] = [
      ['ending now', NOW, 'until: expected a time later than now'],
      ['ending in the past', NOW - 1, 'until: expected a time later than now'],
      ['ending more than 90 days on', NOW + 90 * DAY_MS + 1, 'until: expected at most 90 days from now'],
    ];
    for (const [what, until, message] of refused) {
      it(`${what} is refused with INVALID_UNTIL naming the problem, and changes and announces nothing`, async () => {
        const [record] = await seedRecords(suite.storage, [{ userId: 'u-snooze', lastUpdate: NOW - 60_000 }]);
        const changes = announced();
        const mark: InboxMark = { kind: 'snooze', ids: [record!], until };
        await expect(markInbox(suite.storage, changes, { userId: 'u-snooze', mark, now: NOW }))
          .to.be.rejectedWith(InvalidUntilError, message)
          .and.eventually.include({ code: 'INVALID_UNTIL' });
        const page = await suite.storage.inbox!.page('u-snooze', 'snoozed', undefined, 10, NOW);
        expect(page.records).to.deep.equal([]);
        expect(changes.marks).to.deep.equal([]);
      });
    }

    it('ending exactly 90 days on snoozes the record until then', async () => {
      const [record] = await seedRecords(suite.storage, [
        { userId: 'u-snooze-90', lastUpdate: NOW - 60_000 },
      ]);
      const changes = announced();
      const until = NOW + 90 * DAY_MS;
      const mark: InboxMark = { kind: 'snooze', ids: [record!], until };
      expect(await markInbox(suite.storage, changes, { userId: 'u-snooze-90', mark, now: NOW })).to.equal(1);
      const page = await suite.storage.inbox!.page('u-snooze-90', 'snoozed', undefined, 10, NOW);
      expect(page.records.map((one) => one.snoozedUntil)).to.deep.equal([until]);
      expect(changes.marks).to.have.length(1);
    });
  });
});
