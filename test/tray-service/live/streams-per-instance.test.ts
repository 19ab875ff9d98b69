import { expect } from 'chai';
import request from 'supertest';
import { bearer } from '../api/support/api-harness.ts';
import { expectMatchesOpenApi } from '../api/support/openapi-validator.ts';
import { waitFor } from '../../support/wait-for.ts';
import { useLiveTray } from './support/live-harness.ts';
import { named, openSse, type SseStream } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';

// Every stream holds memory and a file descriptor: past the instance's bound, streams are refused
// (503, Retry-After) rather than opened until the process runs out of either.
describe('STREAMS_PER_INSTANCE', function () {
  this.timeout(30_000);
  const tray = useLiveTray({ instances: 1, streamsPerInstance: 2 });

  it('refuses one stream more than the bound with 503 and Retry-After, its ticket not spent, and opens it once one closed', async () => {
    const base = tray.instance(0).base;
    const open: SseStream[] = [];
    try {
      for (const user of ['u-cap-1', 'u-cap-2']) {
        const stream = await openSse(`${base}${STREAM}`, { Authorization: await bearer(user) });
        await stream.next(named('unread'));
        open.push(stream);
      }
      const ticket = await request(base)
        .post('/notifications/v3/stream-ticket')
        .set('Authorization', await bearer('u-cap-3'))
        .expect(201);
      const path = `${STREAM}?ticket=${encodeURIComponent(ticket.body.data.ticket as string)}`;
      const refused = await request(base).get(path).timeout(5_000).expect(503);
      expect(refused.body).to.deep.include({ status: 'error', code: 503000 });
      expect(refused.body.message).to.include('live streams');
      expect(Number(refused.headers['retry-after'])).to.be.within(5, 15);
      expectMatchesOpenApi(refused, 'GET', STREAM);

      open.shift()?.close();
      await waitFor(() => tray.instance(0).live.hub.size === 1, 5_000, 'the first stream to end');
      const third = await openSse(`${base}${path}`);
      open.push(third);
      await third.next(named('unread'));
      expect(tray.instance(0).live.hub.size).to.equal(2);
    } finally {
      for (const stream of open) stream.close();
    }
  });
});
