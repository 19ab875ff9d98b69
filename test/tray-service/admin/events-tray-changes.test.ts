import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { encodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import {
  commentDeleteEvent,
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  minute,
  postDeleteEvent,
  postEvent,
} from '../worker/event-builder.ts';
import { useWorker } from '../worker/worker-harness.ts';
import { ADMIN_TOKEN, adminApp } from './admin-fixtures.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

describe('admin events API: which trays a removal changed', function () {
  this.timeout(30_000);
  const worker = useWorker();
  let app: Express;
  let close: () => void;
  const byCid = commentEvent({ commentId: 'cm-7', author: 'u-cid', createdAt: minute(5) });
  const byBen = commentEvent({ commentId: 'cm-8', author: 'u-ben', createdAt: minute(6) });
  const deleted = commentDeleteEvent({ commentId: 'cm-7', author: 'u-cid' });
  const early = commentDeleteEvent({ commentId: 'cm-9', author: 'u-dee' });
  const anasRecord = encodeRecordKey({ verb: 'comment', targetId: 'p-100', userId: 'u-ana' });

  before(async () => {
    for (const envelope of [byCid, byBen, deleted, early]) await worker.deliver(envelope);
    ({ app, close } = adminApp(worker.storage));
  });
  after(() => close());

  const detail = async (key: string) =>
    (await request(app).get(`/admin/events/${key}`).set(admin).expect(200)).body as Record<string, unknown>;

  describe('GET /admin/events/:key of a removal event', () => {
    it('shows the record it shrank, with its actors and count before and after, as recorded when applied', async () => {
      expect((await detail(dedupeKeyOf(deleted))).trayChanges).to.deep.equal({
        voided: 1,
        shrunk: 1,
        replaced: 0,
        removed: 0,
        listed: 1,
        items: [
          {
            userId: 'u-ana',
            key: anasRecord,
            change: 'shrunk',
            before: { actorsCount: 2, actorIds: ['u-ben', 'u-cid'], lastActionId: 'cm-8' },
            after: { actorsCount: 1, actorIds: ['u-ben'], lastActionId: 'cm-8' },
          },
        ],
        nextCursor: null,
      });
    });

    it('shows that a removal of an action that never arrived changed nothing', async () => {
      expect((await detail(dedupeKeyOf(early))).trayChanges).to.deep.equal({
        voided: 0,
        shrunk: 0,
        replaced: 0,
        removed: 0,
        listed: 0,
        items: [],
        nextCursor: null,
      });
    });

    it('stays as recorded after a replay of the removal (nothing left to take out, nothing added)', async () => {
      await worker.deliver(deleted);
      expect((await detail(dedupeKeyOf(deleted))).trayChanges).to.deep.include({
        voided: 1,
        shrunk: 1,
        listed: 1,
      });
    });
  });

  it('GET /admin/events/:key of another event has no trayChanges', async () => {
    expect(await detail(dedupeKeyOf(byCid))).not.to.have.property('trayChanges');
  });

  describe('GET /admin/events/:key/tray-changes', () => {
    it('pages the listed changes', async () => {
      const page = await request(app)
        .get(`/admin/events/${dedupeKeyOf(deleted)}/tray-changes?limit=1`)
        .set(admin)
        .expect(200);
      expect(page.body).to.deep.include({ nextCursor: null });
      expect(page.body.items).to.have.length(1);
      expect(page.body.items[0]).to.deep.include({ userId: 'u-ana', change: 'shrunk' });
    });

    it('walks every change of a removal, page after page, each once', async () => {
      const members = Array.from({ length: 25 }, (_, i) => `u-p${String(i).padStart(2, '0')}`);
      const removal = postDeleteEvent({ postId: 'p-paged', author: 'u-zed' });
      for (const envelope of [
        membershipEvent('join', members, 'c-hike', minute(0)),
        postEvent({ postId: 'p-paged', author: 'u-zed', createdAt: minute(10) }),
        removal,
      ])
        await worker.deliver(envelope);
      const users: string[] = [];
      let cursor: string | null = '';
      let pages = 0;
      while (cursor !== null) {
        const query: string = cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const page = await request(app)
          .get(`/admin/events/${dedupeKeyOf(removal)}/tray-changes?limit=10${query}`)
          .set(admin)
          .expect(200);
        pages += 1;
        users.push(...(page.body.items as { userId: string }[]).map((item) => item.userId));
        cursor = page.body.nextCursor as string | null;
      }
      expect(pages).to.equal(3);
      expect([...users].sort()).to.deep.equal(members);
    });

    it('answers 404 for an unknown event and 400 for a cursor no page handed out', async () => {
      await request(app).get('/admin/events/no-such-key/tray-changes').set(admin).expect(404);
      const bad = await request(app)
        .get(`/admin/events/${dedupeKeyOf(deleted)}/tray-changes?cursor=nonsense`)
        .set(admin)
        .expect(400);
      expect(bad.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'cursor: not a cursor this API returned',
      });
    });

    it('answers 400 for a cursor holding U+0000 (PostgreSQL text cannot carry it into the query)', async () => {
      const cursor = Buffer.from(JSON.stringify({ u: 'x', r: 'a\u0000' })).toString('base64url');
      const bad = await request(app)
        .get(`/admin/events/${dedupeKeyOf(deleted)}/tray-changes?cursor=${cursor}`)
        .set(admin)
        .expect(400);
      expect(bad.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'cursor: not a cursor this API returned',
      });
    });
  });
});
