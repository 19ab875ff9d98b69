import { expect } from 'chai';
import type { ModerationDecisionDoc } from '../../../../tray-service/domain/decision-doc.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { MINUTE } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';

/** Moderation decisions (DecisionsPort): insert-only, pending delivery, newest first, delivery outcome. */

function decision(
  id: (name: string) => string,
  n: number,
  overrides: Partial<ModerationDecisionDoc> = {},
): ModerationDecisionDoc {
  const base = Math.floor(Date.now() / MINUTE) * MINUTE;
  return {
    id: id(`d-${n}`),
    eventKey: id(`ev-${n % 2}`),
    event: 'comment.didCreate',
    eventReceivedAt: new Date(base - 60 * MINUTE),
    rule: id('blocked-words'),
    action: 'flag',
    reason: `blocklisted words: "spam${n}"`,
    subject: { type: 'comment', id: `cm-${n}` },
    userId: id(`u-${n % 3}`),
    decidedAt: new Date(base - (n === 3 ? 2 : n) * MINUTE),
    expiresAt: new Date(base + 30 * DAY_MS),
    delivery: 'pending',
    deliveryAttempts: 0,
    ...overrides,
  };
}

conformanceCase(
  'decisions: saveAll inserts once (an existing one is left as it is); get and pendingAmong',
  async ({ storage, id }) => {
    const one = decision(id, 1);
    await storage.decisions.saveAll([one, decision(id, 2, { delivery: 'off' })]);
    await storage.decisions.saveAll([{ ...one, reason: 'changed', delivery: 'off' }]);
    expect(await storage.decisions.get(one.id)).to.deep.equal(one);
    expect(await storage.decisions.get(id('d-missing'))).to.equal(undefined);
    expect((await storage.decisions.pendingAmong([one.id, id('d-2'), id('d-missing')])).sort()).to.deep.equal(
      [one.id],
    );
  },
);

conformanceCase(
  'decisions: list newest first by decidedAt then id, filtered and paged',
  async ({ storage, id }) => {
    const all = [1, 2, 3, 4, 5].map((n) => decision(id, n, n === 5 ? { action: 'ban-request' } : {}));
    await storage.decisions.saveAll(all);
    const rule = id('blocked-words');
    const expected = [...all].sort(
      (a, b) => b.decidedAt.getTime() - a.decidedAt.getTime() || (a.id < b.id ? 1 : -1),
    );
    const first = await storage.decisions.list({ rule }, 3);
    expect(first.items).to.deep.equal(expected.slice(0, 3));
    const second = await storage.decisions.list({ rule }, 3, first.next);
    expect(second.items).to.deep.equal(expected.slice(3));
    expect(second.next).to.equal(undefined);
    expect((await storage.decisions.list({ rule, action: 'ban-request' }, 10)).items).to.deep.equal([all[4]]);
    expect((await storage.decisions.list({ rule, userId: id('u-1') }, 10)).items).to.deep.equal(
      expected.filter((one) => one.userId === id('u-1')),
    );
    expect((await storage.decisions.list({ rule, eventKey: id('ev-0') }, 10)).items).to.deep.equal(
      expected.filter((one) => one.eventKey === id('ev-0')),
    );
  },
);

conformanceCase(
  'decisions: a delivery that succeeded is never overridden by a failed attempt',
  async ({ storage, id }) => {
    const one = decision(id, 1);
    const two = decision(id, 2);
    await storage.decisions.saveAll([one, two]);
    const at = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);
    await storage.decisions.markDelivered(one.id, 2, at);
    await storage.decisions.markAttemptFailed(one.id, 3, 'late failure', true);
    expect(await storage.decisions.get(one.id)).to.deep.equal({
      ...one,
      delivery: 'delivered',
      deliveryAttempts: 2,
      deliveredAt: at,
    });
    await storage.decisions.markAttemptFailed(two.id, 1, 'HTTP 500', false);
    expect(await storage.decisions.get(two.id)).to.deep.include({
      delivery: 'pending',
      deliveryAttempts: 1,
      lastError: 'HTTP 500',
    });
    await storage.decisions.markAttemptFailed(two.id, 2, 'HTTP 502', true);
    expect(await storage.decisions.get(two.id)).to.deep.include({
      delivery: 'failed',
      deliveryAttempts: 2,
      lastError: 'HTTP 502',
    });
    expect(await storage.decisions.pendingAmong([one.id, two.id])).to.deep.equal([]);
    expect(
      (await storage.decisions.list({ rule: id('blocked-words'), delivery: 'failed' }, 10)).items.map(
        (d) => d.id,
      ),
    ).to.deep.equal([two.id]);
  },
);

conformanceCase(
  'decisions: purged with their event (the expiry they were saved with), never while delivery is pending',
  async (context) => {
    const storage = await context.isolated();
    const { id } = context;
    const now = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);
    const expired = new Date(now.getTime() - DAY_MS);
    const live = new Date(now.getTime() + DAY_MS);
    const off = decision(id, 1, { delivery: 'off', expiresAt: expired });
    const pending = decision(id, 2, { expiresAt: expired });
    const failing = decision(id, 3, { expiresAt: expired });
    const delivered = decision(id, 4, { expiresAt: expired });
    const kept = decision(id, 5, { delivery: 'off', expiresAt: live });
    await storage.decisions.saveAll([off, pending, failing, delivered, kept]);
    await storage.decisions.markDelivered(delivered.id, 1, now);
    await storage.decisions.markAttemptFailed(failing.id, 1, 'HTTP 500', false);
    const remaining = async () => (await storage.decisions.list({}, 10)).items.map((one) => one.id).sort();

    await storage.purgeExpired(now);
    // Still pending (a retry to come): kept past its expiry, so the delivery finds it.
    expect(await remaining()).to.deep.equal([pending.id, failing.id, kept.id].sort());
    expect(await storage.decisions.get(pending.id)).to.deep.equal(pending);

    // Delivered, or given up: the next purge takes it.
    await storage.decisions.markDelivered(pending.id, 1, now);
    await storage.decisions.markAttemptFailed(failing.id, 2, 'HTTP 500', true);
    await storage.purgeExpired(now);
    expect(await remaining()).to.deep.equal([kept.id]);
    expect(await storage.decisions.get(kept.id)).to.deep.equal(kept);
  },
);

conformanceCase(
  'decisions: saved again before their expiry they keep everything, but a later expiry',
  async (context) => {
    const storage = await context.isolated();
    const { id } = context;
    const now = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);
    const one = decision(id, 1, { expiresAt: new Date(now.getTime() + DAY_MS) });
    await storage.decisions.saveAll([one]);
    await storage.decisions.markDelivered(one.id, 1, now);
    const delivered = await storage.decisions.get(one.id);
    const renewed = new Date(now.getTime() + 30 * DAY_MS);
    await storage.decisions.saveAll([{ ...one, reason: 'changed', expiresAt: renewed }]);
    // An earlier expiry never shortens it.
    await storage.decisions.saveAll([{ ...one, expiresAt: new Date(now.getTime() - 2 * DAY_MS) }]);
    await storage.purgeExpired(now);
    expect(await storage.decisions.get(one.id)).to.deep.equal({ ...delivered, expiresAt: renewed });
  },
);

// Its event, expired, counts as gone and is stored anew when it comes back (a redelivery after the
// retention, a replay): so does the decision, as when the purge had removed it first, whenever the
// purge runs. Kept instead, it stayed delivered (never sent again) with the old event's times.
conformanceCase(
  'decisions: saved again once expired (their event stored anew) they are new: decided, delivered and kept anew, purged or not',
  async (context) => {
    const storage = await context.isolated();
    const { id } = context;
    const now = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);
    const old = decision(id, 1, {
      decidedAt: new Date(now.getTime() - 31 * DAY_MS),
      eventReceivedAt: new Date(now.getTime() - 31 * DAY_MS),
      expiresAt: new Date(now.getTime() - DAY_MS),
    });
    await storage.decisions.saveAll([old]);
    await storage.decisions.markDelivered(old.id, 1, new Date(now.getTime() - 31 * DAY_MS));
    const again = {
      ...old,
      reason: 'changed',
      decidedAt: now,
      eventReceivedAt: now,
      expiresAt: new Date(now.getTime() + 30 * DAY_MS),
    };
    await storage.decisions.saveAll([again]);
    expect(await storage.decisions.get(old.id)).to.deep.equal(again);
    expect(await storage.decisions.pendingAmong([old.id])).to.deep.equal([old.id]);
    // Saved again after that (a retry of the same job): left as it is.
    await storage.decisions.saveAll([{ ...again, reason: 'retried' }]);
    expect(await storage.decisions.get(old.id)).to.deep.equal(again);
  },
);

// A job (a retry, a replay) that found its event unexpired and kept it, and moderated it after
// the expiry passed meanwhile: the event was not stored anew, and neither is the decision.
conformanceCase(
  'decisions: saved again past their expiry but with no later one (their event was kept, not stored anew) they are left as they are',
  async (context) => {
    const storage = await context.isolated();
    const { id } = context;
    const now = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);
    const one = decision(id, 1, { delivery: 'off', expiresAt: new Date(now.getTime() - MINUTE) });
    await storage.decisions.saveAll([one]);
    await storage.decisions.saveAll([{ ...one, reason: 'changed', delivery: 'pending', decidedAt: now }]);
    expect(await storage.decisions.get(one.id)).to.deep.equal(one);
    expect(await storage.decisions.pendingAmong([one.id])).to.deep.equal([]);
  },
);
