import { expect } from 'chai';
import request from 'supertest';
import { expiringToken } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';
import { named, openSse, type SseStream } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';

describe('a live stream and its token expiry', function () {
  this.timeout(30_000);
  const tray = useLiveTray({ instances: 1 });
  const open: SseStream[] = [];
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  async function expectEndsAtExpiry(stream: SseStream, expiresAtMs: number) {
    open.push(stream);
    expect(stream.status).to.equal(200);
    await stream.next(named('unread'));
    const expired = await stream.next(named('expired'), { timeoutMs: 10_000 });
    const lateness = Date.now() - expiresAtMs;
    expect(lateness).to.be.within(-50, 1_500);
    expect(JSON.parse(expired.data)).to.deep.equal({ reason: 'token-expired', reconnect: true });
    expect(expired.id).to.be.a('string').and.not.equal('');
    await stream.ended;
    expect(stream.events.at(-1)?.event).to.not.equal('record');
  }

  it('opened with a bearer token, ends at the token\'s exp with a final "expired" event', async () => {
    const seconds = 2;
    const token = await expiringToken('u-exp-bearer', seconds);
    const expiresAtMs = (Math.floor(Date.now() / 1000) + seconds) * 1000;
    const stream = await openSse(`${tray.instance(0).base}${STREAM}`, { Authorization: `Bearer ${token}` });
    await expectEndsAtExpiry(stream, expiresAtMs);
  });

  it('opened with a ticket, ends when the token that asked for the ticket expires', async () => {
    const seconds = 3;
    const token = await expiringToken('u-exp-ticket', seconds);
    const expiresAtMs = (Math.floor(Date.now() / 1000) + seconds) * 1000;
    const issued = await request(tray.instance(0).base)
      .post('/notifications/v3/stream-ticket')
      .set('Authorization', `Bearer ${token}`)
      .expect(201);
    const ticket = (issued.body as { data: { ticket: string } }).data.ticket;
    const stream = await openSse(`${tray.instance(0).base}${STREAM}?ticket=${ticket}`);
    await expectEndsAtExpiry(stream, expiresAtMs);
  });
});
