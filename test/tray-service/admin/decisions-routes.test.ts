import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { toDecisionDoc } from '../../../tray-service/domain/decision-doc.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp, eventDoc, storeEvents, userToken } from './admin-fixtures.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

describe('GET /admin/moderation/decisions', () => {
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  const at = (hour: number) => new Date(Date.UTC(2026, 10, 20, hour));
  const ids: Record<string, string> = {};
  /** Each decision's event's receivedAt, as the API writes it. */
  const received: Record<string, string> = {};

  before(async () => {
    const make = (
      name: string,
      hour: number,
      rule: string,
      action: 'flag' | 'ban-request',
      userId: string,
      delivery: 'off' | 'pending',
    ) => {
      const event = eventDoc({ key: `ev-${name}` });
      received[name] = event.receivedAt.toISOString();
      const doc = toDecisionDoc(
        event,
        rule,
        {
          action,
          reason: `reason ${name}`,
          subject: { type: 'post', id: `p-${name}` },
          userId,
        },
        { now: at(hour), delivery },
      );
      ids[name] = doc.id;
      return doc;
    };
    await suite.storage.decisions.saveAll([
      make('a', 1, 'blocked-words', 'flag', 'u-ana', 'off'),
      make('b', 2, 'blocked-words', 'flag', 'u-ben', 'pending'),
      make('c', 3, 'repeat-offender', 'ban-request', 'u-ana', 'off'),
      make('d', 4, 'blocked-words', 'flag', 'u-ana', 'off'),
    ]);
    ({ app, close } = adminApp(suite.storage, { maxLimit: 2 }));
  });
  after(() => close());

  async function all(query: string): Promise<string[]> {
    const names = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const sep: string = query ? '&' : '?';
      const res: request.Response = await request(app)
        .get(`/admin/moderation/decisions${query}${cursor ? `${sep}cursor=${cursor}` : ''}`)
        .set(admin)
        .expect(200);
      expect(res.body.items.length).to.be.at.most(2);
      seen.push(...(res.body.items as { id: string }[]).map((item) => names[item.id]!));
      cursor = res.body.nextCursor as string | null;
    }
    return seen;
  }

  it('lists decisions newest first, paged', async () => {
    expect(await all('')).to.deep.equal(['d', 'c', 'b', 'a']);
  });

  it('shows each decision with its event, rule, subject and delivery state', async () => {
    const res = await request(app)
      .get('/admin/moderation/decisions?rule=repeat-offender')
      .set(admin)
      .expect(200);
    expect(res.body.items).to.deep.equal([
      {
        id: ids.c,
        eventKey: 'ev-c',
        event: 'post.didCreate',
        eventReceivedAt: received.c,
        rule: 'repeat-offender',
        action: 'ban-request',
        reason: 'reason c',
        subject: { type: 'post', id: 'p-c' },
        userId: 'u-ana',
        decidedAt: '2026-11-20T03:00:00.000Z',
        delivery: 'off',
        deliveryAttempts: 0,
      },
    ]);
  });

  const filters: [string, string[]][] = [
    ['?rule=blocked-words', ['d', 'b', 'a']],
    ['?action=ban-request', ['c']],
    ['?userId=u-ana', ['d', 'c', 'a']],
    ['?eventKey=ev-b', ['b']],
    ['?delivery=pending', ['b']],
    ['?since=2026-11-20T02:00:00Z', ['d', 'c', 'b']],
    ['?until=2026-11-20T02:00:00Z', ['a']],
    ['?userId=u-ana&rule=blocked-words&since=2026-11-20T02:00:00Z', ['d']],
  ];
  for (const [query, expected] of filters) {
    it(`${query} returns ${expected.join(', ')}`, async () => {
      expect(await all(query)).to.deep.equal(expected);
    });
  }

  // A cursor of one list is a position in no other: the events list paged on from a decision's
  // time.
  it('refuses a cursor of the events list, and its own cursors on the events list, naming the list', async () => {
    await storeEvents(suite.storage, [eventDoc(), eventDoc()]);
    const events = await request(app).get('/admin/events?limit=1').set(admin).expect(200);
    expect(events.body.nextCursor).to.be.a('string');
    const decisions = await request(app).get('/admin/moderation/decisions?limit=1').set(admin).expect(200);
    expect(decisions.body.nextCursor).to.be.a('string');
    const onDecisions = await request(app)
      .get(`/admin/moderation/decisions?cursor=${events.body.nextCursor}`)
      .set(admin)
      .expect(400);
    expect(onDecisions.body.message).to.equal('cursor: made for another list (events), not for decisions');
    const onEvents = await request(app)
      .get(`/admin/events?limit=1&cursor=${decisions.body.nextCursor}`)
      .set(admin)
      .expect(400);
    expect(onEvents.body.message).to.equal('cursor: made for another list (decisions), not for events');
  });

  it('refuses a cursor sent with another filter than the one it was made for', async () => {
    const first = await request(app)
      .get('/admin/moderation/decisions?userId=u-ana&limit=1')
      .set(admin)
      .expect(200);
    const res = await request(app)
      .get(`/admin/moderation/decisions?userId=u-ben&cursor=${first.body.nextCursor}`)
      .set(admin)
      .expect(400);
    expect(res.body.message).to.match(/^cursor: made for another filter;/);
  });

  const invalid: [string, string][] = [
    ['?action=ban', 'action: expected flag or ban-request'],
    ['?delivery=lost', 'delivery: expected off, pending, delivered or failed'],
    ['?limit=3', 'limit: expected a whole number from 1 to 2'],
    ['?since=soon', 'since: expected an ISO 8601 time'],
    ['?cursor=xyz', 'cursor: not a cursor this API returned'],
    // PostgreSQL's text cannot hold U+0000, and no stored value does.
    [
      `?cursor=${Buffer.from(JSON.stringify({ t: 0, k: 'a\u0000' })).toString('base64url')}`,
      'cursor: not a cursor this API returned',
    ],
    // A position made by hand: no list, no filter.
    [
      `?cursor=${Buffer.from(JSON.stringify({ t: 0, k: 'a' })).toString('base64url')}`,
      'cursor: not a cursor this API returned',
    ],
    ['?userId=a%00', 'userId: expected no U+0000 character and no lone surrogate'],
    ['?user=u-ana', 'user: unknown query parameter'],
  ];
  for (const [query, message] of invalid) {
    it(`${query} responds 400 naming the field`, async () => {
      const res = await request(app).get(`/admin/moderation/decisions${query}`).set(admin).expect(400);
      expect(res.body.message).to.equal(message);
    });
  }

  it('responds 401 to a user token: it is never an admin credential', async () => {
    const token = await userToken('u-ana', { role: 'admin' });
    await request(app).get('/admin/moderation/decisions').set('Authorization', `Bearer ${token}`).expect(401);
  });
});
