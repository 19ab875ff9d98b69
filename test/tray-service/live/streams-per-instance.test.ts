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

  // Streams still being authorised (ticket, ban check, rate limit, slot: Redis calls each) were
  // not counted: clients coming back at once after a sibling instance's shutdown all passed the
  // check, and the bound had no ceiling.
  it('counts the streams being authorised: of ten opened at once, two are held and eight refused', async () => {
    const base = tray.instance(0).base;
    await waitFor(() => tray.instance(0).live.hub.size === 0, 5_000, 'the earlier streams to end');
    const headers = await Promise.all(
      Array.from({ length: 10 }, async (_, n) => ({ Authorization: await bearer(`u-burst-${n}`) })),
    );
    const answers = await Promise.all(
      headers.map(async (header) => {
        const answer = await fetch(`${base}${STREAM}`, { headers: header });
        return { status: answer.status, body: answer.body };
      }),
    );
    try {
      expect(answers.map((answer) => answer.status).sort()).to.deep.equal([
        ...Array(2).fill(200),
        ...Array(8).fill(503),
      ]);
      expect(tray.instance(0).live.hub.size).to.equal(2);
    } finally {
      for (const answer of answers) await answer.body?.cancel();
    }
  });
});
