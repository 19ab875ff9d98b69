import { expect } from 'chai';
import type { ModerationDecisionDoc } from '../../../../tray-service/domain/decision-doc.ts';
import type { DecisionsFilter } from '../../../../tray-service/storage/port.ts';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import {
  createPostgresDecisions,
  decisionsPageQuery,
} from '../../../../tray-service/storage/postgres/postgres-decisions.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { planOf } from './plan-of.ts';

const t0 = Date.parse('2026-11-20T10:00:00.000Z');

function decision(id: string, overrides: Partial<ModerationDecisionDoc> = {}): ModerationDecisionDoc {
  return {
    id,
    eventKey: `ev-${id}`,
    event: 'comment.created',
    eventReceivedAt: new Date(t0 - 1_000),
    rule: 'blocked-words',
    action: 'flag',
    reason: 'blocklisted words: "spam"',
    subject: { type: 'comment', id: `cm-${id}` },
    userId: 'u-eve',
    decidedAt: new Date(t0),
    expiresAt: new Date(t0 + 30 * 86_400_000),
    delivery: 'pending',
    deliveryAttempts: 0,
    ...overrides,
  };
}

describe('storage/postgres moderation decisions', () => {
  const pg = usePostgres();
  const decisions = () => createPostgresDecisions(pg.pool);
  before(async () => {
    await migrate(pg.pool);
  });
  beforeEach(async () => {
    await pg.pool.query('TRUNCATE moderation_decisions');
  });

  describe('saveAll', () => {
    it('stores each decision as given, optional fields left out when absent', async () => {
      const { userId: _omitted, ...anonymous } = decision('d2');
      const full = decision('d1', { deliveredAt: new Date(t0 + 5), lastError: 'x', delivery: 'delivered' });
      await decisions().saveAll([full, anonymous]);
      expect(await decisions().get('d1')).to.deep.equal(full);
      expect(await decisions().get('d2')).to.deep.equal(anonymous);
      expect(await decisions().get('d3')).to.equal(undefined);
    });

    it('leaves an existing decision exactly as it is, also when a batch names it twice', async () => {
      await decisions().saveAll([decision('d1')]);
      await decisions().markDelivered('d1', 2, new Date(t0 + 9));
      const delivered = await decisions().get('d1');
      await decisions().saveAll([decision('d1', { reason: 'changed' }), decision('d1'), decision('d0')]);
      expect(await decisions().get('d1')).to.deep.equal(delivered);
      expect(await decisions().get('d0')).to.deep.equal(decision('d0'));
    });

    it('stores each decision once when overlapping batches are saved concurrently', async () => {
      const all = Array.from({ length: 40 }, (_, n) => decision(`d${String(n).padStart(2, '0')}`));
      await Promise.all(
        Array.from({ length: 6 }, (_, n) => decisions().saveAll(n % 2 === 0 ? all : [...all].reverse())),
      );
      const { rows } = await pg.pool.query<{ count: string }>('SELECT count(*) FROM moderation_decisions');
      expect(Number(rows[0]?.count)).to.equal(40);
    });
  });

  it('finds the pending decisions among given ids', async () => {
    await decisions().saveAll([decision('d1'), decision('d2', { delivery: 'off' }), decision('d3')]);
    await decisions().markDelivered('d3', 1, new Date(t0));
    expect(await decisions().pendingAmong(['d1', 'd2', 'd3', 'd4'])).to.deep.equal(['d1']);
    expect(await decisions().pendingAmong([])).to.deep.equal([]);
  });

  describe('delivery state', () => {
    it('records a delivery and clears the last error', async () => {
      await decisions().saveAll([decision('d1')]);
      await decisions().markAttemptFailed('d1', 1, 'timeout', false);
      expect(await decisions().get('d1')).to.deep.include({ deliveryAttempts: 1, lastError: 'timeout' });
      await decisions().markDelivered('d1', 2, new Date(t0 + 7));
      const stored = await decisions().get('d1');
      expect(stored).to.deep.include({
        delivery: 'delivered',
        deliveryAttempts: 2,
        deliveredAt: new Date(t0 + 7),
      });
      expect(stored).to.not.have.property('lastError');
    });

    it('marks a decision failed on the final attempt, keeping 500 characters of the error', async () => {
      await decisions().saveAll([decision('d1')]);
      await decisions().markAttemptFailed('d1', 1, 'first', false);
      expect(await decisions().get('d1')).to.deep.include({ delivery: 'pending' });
      await decisions().markAttemptFailed('d1', 3, 'e'.repeat(600), true);
      expect(await decisions().get('d1')).to.deep.include({
        delivery: 'failed',
        deliveryAttempts: 3,
        lastError: 'e'.repeat(500),
      });
    });

    it('never lets a failure report override a delivery that succeeded', async () => {
      await decisions().saveAll([decision('d1')]);
      await decisions().markDelivered('d1', 1, new Date(t0));
      await decisions().markAttemptFailed('d1', 2, 'late report', true);
      const stored = await decisions().get('d1');
      expect(stored).to.deep.include({ delivery: 'delivered', deliveryAttempts: 1 });
      expect(stored).to.not.have.property('lastError');
    });
  });

  describe('list', () => {
    beforeEach(async () => {
      await decisions().saveAll([
        decision('a', { decidedAt: new Date(t0 + 1), rule: 'links' }),
        decision('b', { decidedAt: new Date(t0 + 2), action: 'ban-request', userId: 'u-max' }),
        decision('c', { decidedAt: new Date(t0 + 2), delivery: 'failed', eventKey: 'ev-x' }),
        decision('d', { decidedAt: new Date(t0 + 3), eventKey: 'ev-x' }),
      ]);
    });
    const ids = (items: readonly ModerationDecisionDoc[]) => items.map((item) => item.id);

    it('lists newest first, the id breaking ties, in keyset pages', async () => {
      const first = await decisions().list({}, 2);
      expect(ids(first.items)).to.deep.equal(['d', 'c']);
      expect(first.next).to.deep.equal({ at: new Date(t0 + 2), id: 'c' });
      const second = await decisions().list({}, 2, first.next);
      expect(ids(second.items)).to.deep.equal(['b', 'a']);
      expect(second.next).to.equal(undefined);
    });

    it('filters by rule, action, user, event, delivery and a [since, until) range', async () => {
      const cases: [DecisionsFilter, string[]][] = [
        [{ rule: 'links' }, ['a']],
        [{ action: 'ban-request' }, ['b']],
        [{ userId: 'u-eve' }, ['d', 'c', 'a']],
        [{ eventKey: 'ev-x' }, ['d', 'c']],
        [{ delivery: 'failed' }, ['c']],
        [{ since: new Date(t0 + 2), until: new Date(t0 + 3) }, ['c', 'b']],
      ];
      for (const [filter, expected] of cases) {
        expect(ids((await decisions().list(filter, 10)).items), JSON.stringify(filter)).to.deep.equal(
          expected,
        );
      }
    });

    const after = { at: new Date(t0), id: 'x' };
    for (const [filter, index] of [
      [{}, 'moderation_decisions_decided'],
      [{ userId: 'u-eve' }, 'moderation_decisions_user_decided'],
      [{ rule: 'links' }, 'moderation_decisions_rule_decided'],
      [{ action: 'flag' }, 'moderation_decisions_action_decided'],
      [{ delivery: 'failed' }, 'moderation_decisions_delivery_decided'],
      [{ eventKey: 'ev-x' }, 'moderation_decisions_event_key'],
      // An event's detail: the decisions about its delivery.
      [{ eventKey: 'ev-x', eventReceivedAt: new Date(t0) }, 'moderation_decisions_event_key'],
    ] as const) {
      it(`reads a page filtered by ${JSON.stringify(filter)} from ${index}, in index order`, async () => {
        for (const key of [undefined, after]) {
          const plan = await planOf(pg.pool, decisionsPageQuery(filter, 50, key));
          expect(plan.indexes).to.deep.equal([index]);
          expect(plan.nodes).to.not.include('Sort');
        }
      });
    }
  });
});
