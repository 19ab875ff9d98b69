import { expect } from 'chai';
import { archive, unarchive } from '../../../tray-service/domain/archive-mark.ts';
import { inInbox, NEW_INBOX_STATE, type MarkableRecord } from '../../../tray-service/domain/inbox-state.ts';
import { inboxViews, inView } from '../../../tray-service/domain/inbox-view.ts';
import { markReadAndSeen, markSeen, seenByLastRead } from '../../../tray-service/domain/seen-mark.ts';
import { snooze, snoozeUntilProblem, unsnooze, wake } from '../../../tray-service/domain/snooze-mark.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';

const record = (extra: Partial<MarkableRecord> = {}): MarkableRecord => ({
  ...NEW_INBOX_STATE,
  hasRead: false,
  unreadAt: 10,
  ...extra,
});

describe('inbox marks (docs/tray-rules.md#inbox)', () => {
  it('a new record is unseen and in the inbox', () => {
    expect([NEW_INBOX_STATE.isSeen, inInbox(NEW_INBOX_STATE)]).to.deep.equal([false, true]);
  });

  it('lists a record in the views of its state', () => {
    const states = [record(), record({ archivedAt: 5 }), record({ snoozedUntil: 50 })];
    expect(states.map((state) => inboxViews.filter((view) => inView(state, view)))).to.deep.equal([
      ['inbox', 'all'],
      ['archived', 'all'],
      ['snoozed', 'all'],
    ]);
  });

  it('seen, read and last-read marks change only what is not yet so', () => {
    expect([markSeen(record()), markSeen(record({ isSeen: true }))]).to.deep.equal([
      { isSeen: true },
      undefined,
    ]);
    expect(markReadAndSeen(record({ hasRead: true }))).to.deep.equal({ hasRead: true, isSeen: true });
    expect(markReadAndSeen(record({ hasRead: true, isSeen: true }))).to.equal(undefined);
    expect([seenByLastRead(record(), 10), seenByLastRead(record(), 9)]).to.deep.equal([
      { isSeen: true },
      undefined,
    ]);
    expect(seenByLastRead(record({ hasRead: true }), 20)).to.equal(undefined);
  });

  it('archiving keeps the first archivedAt and ends a snooze; unarchiving changes nothing else', () => {
    expect(archive(record({ snoozedUntil: 50 }), 20)).to.deep.equal({ archivedAt: 20, snoozedUntil: null });
    expect(archive(record({ archivedAt: 5 }), 20)).to.equal(undefined);
    expect([unarchive(record({ archivedAt: 5 })), unarchive(record())]).to.deep.equal([
      { archivedAt: null },
      undefined,
    ]);
  });

  it('snoozing ends an archive, moves the end, and repeats to nothing', () => {
    expect(snooze(record({ archivedAt: 5 }), 50)).to.deep.equal({ snoozedUntil: 50, archivedAt: null });
    expect(snooze(record({ snoozedUntil: 50 }), 60)).to.deep.equal({ snoozedUntil: 60, archivedAt: null });
    expect(snooze(record({ snoozedUntil: 50 }), 50)).to.equal(undefined);
    expect([unsnooze(record({ snoozedUntil: 50 })), unsnooze(record())]).to.deep.equal([
      { snoozedUntil: null },
      undefined,
    ]);
  });

  it('the wake-up brings a due record back unread and unseen, changed at its until', () => {
    const due = record({ snoozedUntil: 50, hasRead: true, isSeen: true });
    expect(wake(due, 49)).to.equal(undefined);
    // At its until exactly: a snooze is over when its time has come.
    expect(wake(due, 50)).to.deep.equal({ snoozedUntil: null, hasRead: false, isSeen: false, unreadAt: 50 });
    expect(wake(due, 51)).to.deep.equal({ snoozedUntil: null, hasRead: false, isSeen: false, unreadAt: 50 });
    expect(wake(record(), 51)).to.equal(undefined);
  });

  it('a snooze ends later than now and at most 90 days on', () => {
    expect(snoozeUntilProblem(11, 10, 90)).to.equal(undefined);
    expect(snoozeUntilProblem(10 + 90 * DAY_MS, 10, 90)).to.equal(undefined);
    expect(snoozeUntilProblem(10, 10, 90)).to.equal('until: expected a time later than now');
    expect(snoozeUntilProblem(11 + 90 * DAY_MS, 10, 90)).to.equal('until: expected at most 90 days from now');
    expect(snoozeUntilProblem(1.5, 0, 90)).to.match(/^until: expected an integer/);
    // A shorter retention than 90 days bounds it: a longer snooze would always outlive its record.
    expect(snoozeUntilProblem(10 + 7 * DAY_MS, 10, 7)).to.equal(undefined);
    expect(snoozeUntilProblem(11 + 7 * DAY_MS, 10, 7)).to.equal(
      "until: expected at most 7 days from now (the records' retention)",
    );
    expect(snoozeUntilProblem(11 + DAY_MS, 10, 1)).to.equal(
      "until: expected at most 1 day from now (the records' retention)",
    );
    expect(snoozeUntilProblem(10 + 90 * DAY_MS, 10, 365)).to.equal(undefined);
    expect(snoozeUntilProblem(11 + 90 * DAY_MS, 10, 365)).to.equal(
      'until: expected at most 90 days from now',
    );
  });
});
