import { expect } from 'chai';
import type { ModerationDecisionDoc } from '../../../../tray-service/domain/decision-doc.ts';
import type { ModerationAction } from '../../../../tray-service/domain/moderation-action.ts';
import type { StoredEvent } from '../../../../tray-service/domain/stored-event.ts';
import type { EventOutcome, TrayStorage } from '../../../../tray-service/storage/port.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { createEventDetail } from '../../../../tray-service/use-cases/event-detail.ts';
import { createEventRecipients } from '../../../../tray-service/use-cases/event-recipients.ts';
import { MINUTE } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';

/**
 * What the events console reads of stored events (EventsPort): the subject and moderation filters,
 * the applied mark. The per-minute rollups are in event-rollups-cases.ts.
 */

/** Received within the last hour (the events' retention runs on the real clock). */
const received = (minutesAgo: number) =>
  new Date(Math.floor(Date.now() / MINUTE) * MINUTE - minutesAgo * MINUTE);

function storeOne(
  storage: TrayStorage,
  key: string,
  webhook: string,
  minutesAgo: number,
  outcome: Partial<EventOutcome> = {},
  event = 'comment.didCreate',
): Promise<StoredEvent> {
  return storage.events.store(
    { key, event, data: { n: minutesAgo }, webhook, receivedAt: received(minutesAgo) },
    { status: 'applied', ...outcome },
    { retentionDays: 7, now: received(0) },
  );
}

function decision(eventKey: string, n: number, action: ModerationAction): ModerationDecisionDoc {
  return {
    id: `${eventKey}-d${n}`,
    eventKey,
    event: 'comment.didCreate',
    eventReceivedAt: received(30),
    rule: 'blocked-words',
    action,
    reason: 'r',
    subject: { type: 'comment', id: `cm-${n}` },
    decidedAt: received(1),
    expiresAt: new Date(received(0).getTime() + 7 * DAY_MS),
    delivery: 'off',
    deliveryAttempts: 0,
  };
}

const keysOf = (page: { items: StoredEvent[] }) => page.items.map((event) => event.key);

conformanceCase(
  'events: the acting user and community are stored with the event and filter the list, newest first',
  async ({ storage, id }) => {
    const webhook = id('wh');
    const [ana, ben, hike] = [id('u-ana'), id('u-ben'), id('c-hike')];
    const first = await storeOne(storage, id('e1'), webhook, 9, { userId: ana, communityId: hike });
    await storeOne(storage, id('e2'), webhook, 8, { userId: ben, communityId: hike });
    await storeOne(storage, id('e3'), webhook, 7, { userId: ana }, 'user.didUpdate');
    await storeOne(storage, id('e4'), webhook, 6);
    expect(first).to.include({ userId: ana, communityId: hike });
    expect(await storage.events.get(id('e1'))).to.deep.equal(first);
    expect(keysOf(await storage.events.list({ userId: ana }, 10))).to.deep.equal([id('e3'), id('e1')]);
    expect(keysOf(await storage.events.list({ communityId: hike }, 10))).to.deep.equal([id('e2'), id('e1')]);
    expect(keysOf(await storage.events.list({ userId: ana, event: 'user.didUpdate' }, 10))).to.deep.equal([
      id('e3'),
    ]);
    const page = await storage.events.list({ userId: ana }, 1);
    expect(keysOf(await storage.events.list({ userId: ana }, 1, page.next))).to.deep.equal([id('e1')]);
    expect(await storage.events.count({ communityId: hike })).to.equal(2);
    expect((await storage.events.get(id('e4')))?.userId).to.equal(undefined);
  },
);

conformanceCase(
  'events: saving decisions marks each event with its most severe action, which never goes back',
  async ({ storage, id }) => {
    const webhook = id('wh');
    const keys = ['none', 'flag', 'ban', 'both'].map((name) => id(`ev-${name}`));
    for (const [index, key] of keys.entries()) await storeOne(storage, key, webhook, 20 - index);
    const [none, flag, ban, both] = keys as [string, string, string, string];
    await storage.decisions.saveAll([decision(flag, 1, 'flag'), decision(ban, 1, 'ban-request')]);
    await storage.decisions.saveAll([decision(both, 1, 'ban-request')]);
    // A later flag about an event with a ban request leaves the ban request.
    await storage.decisions.saveAll([decision(both, 2, 'flag'), decision(flag, 1, 'flag')]);
    expect((await storage.events.get(none))?.moderation).to.equal(undefined);
    expect((await storage.events.get(flag))?.moderation).to.equal('flag');
    expect((await storage.events.get(both))?.moderation).to.equal('ban-request');
    const filtered = async (moderation: 'none' | 'any' | ModerationAction) =>
      keysOf(await storage.events.list({ webhook, moderation }, 10));
    expect(await filtered('none')).to.deep.equal([none]);
    expect(await filtered('any')).to.deep.equal([both, ban, flag]);
    expect(await filtered('flag')).to.deep.equal([flag]);
    expect(await filtered('ban-request')).to.deep.equal([both, ban]);
    expect(await storage.events.count({ webhook, moderation: 'any' })).to.equal(3);
    const streamed: string[] = [];
    for await (const event of storage.events.stream({ webhook, moderation: 'ban-request' }))
      streamed.push(event.key);
    expect(streamed).to.deep.equal([both, ban]);
  },
);

conformanceCase(
  'events: markApplied records the first time only, and says whether it was the first',
  async ({ storage, id }) => {
    const stored = await storeOne(storage, id('ev'), id('wh'), 5);
    expect(stored.appliedAt).to.equal(undefined);
    const first = new Date(stored.receivedAt.getTime() + 1_500);
    expect(await storage.events.markApplied(stored, first)).to.equal(true);
    expect(await storage.events.markApplied(stored, new Date(first.getTime() + 60_000))).to.equal(false);
    expect((await storage.events.get(id('ev')))?.appliedAt).to.deep.equal(first);
    expect((await storage.events.list({ webhook: id('wh') }, 1)).items[0]?.appliedAt).to.deep.equal(first);
    // An unknown key is no error (the event expired and was purged meanwhile).
    expect(await storage.events.markApplied({ key: id('gone'), receivedAt: first }, first)).to.equal(false);
  },
);

// An expired event's decisions wait for the purge, longer while still `pending` delivery, and the
// same key stored anew meanwhile (a redelivery after the retention) starts undecided: its detail
// lists only the decisions about its own delivery (those with its receivedAt), the decisions list
// every one.
conformanceCase(
  "events: an event stored anew after it expired lists only its own delivery's decisions in its detail",
  async ({ storage, id }) => {
    const key = id('again');
    const webhook = id('wh');
    const old = new Date(received(0).getTime() - 3 * DAY_MS);
    await storage.events.store(
      { key, event: 'comment.didCreate', data: { v: 1 }, webhook, receivedAt: old },
      { status: 'applied' },
      { retentionDays: 1, now: old },
    );
    const earlier: ModerationDecisionDoc = {
      ...decision(key, 1, 'flag'),
      eventReceivedAt: old,
      decidedAt: old,
      expiresAt: new Date(old.getTime() + DAY_MS),
      delivery: 'pending',
    };
    await storage.decisions.saveAll([earlier]);
    const stored = await storeOne(storage, key, webhook, 5);
    const detail = createEventDetail({
      events: storage.events,
      decisions: storage.decisions,
      recipients: createEventRecipients(storage.communityMembers),
    });
    const undecided = await detail(key);
    expect(undecided?.event).to.deep.equal(stored);
    expect(undecided?.event.moderation).to.equal(undefined);
    expect(undecided?.decisions).to.deep.equal([]);

    const own: ModerationDecisionDoc = {
      ...decision(key, 2, 'ban-request'),
      eventReceivedAt: stored.receivedAt,
      expiresAt: stored.expiresAt,
    };
    await storage.decisions.saveAll([own]);
    const decided = await detail(key);
    expect(decided?.event.moderation).to.equal('ban-request');
    expect(decided?.decisions).to.deep.equal([own]);
    expect((await storage.decisions.list({ eventKey: key }, 10)).items).to.deep.equal([own, earlier]);
  },
);
