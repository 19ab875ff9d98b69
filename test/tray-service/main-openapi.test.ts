import { expect } from 'chai';
import { createAdminOpenApiDocument } from '../../tray-service/admin/api-schema/admin-api-schema.ts';
import { createTrayOpenApiDocument } from '../../tray-service/http/api-schema/tray-api-schema.ts';
import {
  startTrayProcess,
  trayMetricsToken,
  trayToken,
  type TrayProcess,
} from '../reliability/support/tray-process.ts';
import { seedRecords } from '../support/seed-tray.ts';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { testStack } from '../support/test-stack.ts';
import { useTrayStorage } from '../support/use-tray-storage.ts';
import { eventDoc, storeEvents } from './admin/admin-fixtures.ts';
import { createOpenApiValidator, type Answer } from './api/support/openapi-validator.ts';
import { documentedRoutes } from './api/support/served-routes.ts';

const ADMIN_TOKEN = 'main-openapi-admin-token-0123456789abcdef';
const user = 'openapi-main-user';

/** A call: the operation it exercises (as the document names it), and the request. */
interface Call {
  method: string;
  path: string;
  url: string;
  init?: RequestInit & { headers?: Record<string, string> };
}

/** Reads a fetch answer as the validator takes it. An event stream is read until its first event. */
async function answer(res: Response): Promise<Answer & { events: { event: string; data: unknown }[] }> {
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  // Names in lower case, as the validator reads them.
  const headers = Object.fromEntries(res.headers);
  if (type === 'text/event-stream') {
    const reader = res.body!.getReader();
    let text = '';
    // Until the first event, or the first comment of a stream that has no event yet (the admin tail).
    while (!/^(event: .*\n(.*\n)*?\n|: .*\n\n)/m.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    const events = [...text.matchAll(/^event: (\S+)\nid: .*\ndata: (.*)$/gm)].map(([, event, data]) => ({
      event: event!,
      data: JSON.parse(data!) as unknown,
    }));
    return { status: res.status, type, body: undefined, text: '', headers, events };
  }
  const text = await res.text();
  const body: unknown = type === 'application/json' ? JSON.parse(text) : undefined;
  return { status: res.status, type, body, text, headers, events: [] };
}

/** Answers that no call can provoke from a healthy service: its probes and the document itself. */
const successOnly = new Set(['GET /healthz', 'GET /readyz', 'GET /openapi.json']);

// tray-service/main.ts as operators run it, on real Redis and storage: every operation of the
// documents it serves is called, with a success and with an error, and every answer must be what
// the served document says. A documented operation that no call exercises fails the suite.
describe('tray-service/main.ts against the OpenAPI documents it serves', function () {
  this.timeout(120_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  let tray: TrayProcess;
  let trayBase: string;
  let adminBase: string;

  before(async () => {
    await seedRecords(suite.storage, [
      { userId: user, verb: 'mention', mentionIn: 'comment', targetId: 'm1', lastUpdate: Date.now() - 2000 },
      { userId: user, verb: 'comment', targetId: 'c1', parentTargetId: 'p1', lastUpdate: Date.now() - 1000 },
    ]);
    await storeEvents(suite.storage, [eventDoc({ key: 'openapi-main-event', status: 'applied' })]);
    tray = await startTrayProcess({
      redisUrl: testStack().redisUrl,
      prefix,
      env: { ...suite.env, ADMIN_TOKEN, TRAY_DEMO: 'on' },
    });
    trayBase = `http://127.0.0.1:${tray.port}`;
    adminBase = `http://127.0.0.1:${tray.adminPort}`;
  });
  after(() => tray?.kill());

  it('serves the documents generated from the zod declarations', async () => {
    const served = await (await fetch(`${trayBase}/openapi.json`)).json();
    expect(served).to.deep.equal(JSON.parse(JSON.stringify(createTrayOpenApiDocument())));
    const admin = await (await fetch(`${adminBase}/openapi.json`)).json();
    expect(admin).to.deep.equal(
      JSON.parse(JSON.stringify(createAdminOpenApiDocument({ defaultLimit: 50, maxLimit: 500 }))),
    );
  });

  it('answers every documented operation, success and errors, as its document says', async () => {
    const trayDoc = (await (await fetch(`${trayBase}/openapi.json`)).json()) as object;
    const adminDoc = (await (await fetch(`${adminBase}/openapi.json`)).json()) as object;
    const onTray = createOpenApiValidator(trayDoc);
    const onAdmin = createOpenApiValidator(adminDoc);
    const auth = { Authorization: `Bearer ${await trayToken(user)}` };
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const json = (body: unknown, headers: Record<string, string>) => ({
      body: JSON.stringify(body),
      headers: { ...headers, 'Content-Type': 'application/json' },
    });
    const signedIn = await fetch(`${adminBase}/admin/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: ADMIN_TOKEN }),
      redirect: 'manual',
    });
    const session = { Cookie: signedIn.headers.getSetCookie()[0]!.split(';')[0]! };
    const ticket = await fetch(`${trayBase}/notifications/v3/stream-ticket`, {
      method: 'POST',
      headers: auth,
    });
    const { data } = (await ticket.clone().json()) as { data: { ticket: string } };

    const tray$ = (method: string, path: string, url = path, init: Call['init'] = {}): Call => ({
      method,
      path,
      url: `${trayBase}${url}`,
      init: { method, ...init },
    });
    const admin$ = (method: string, path: string, url = path, init: Call['init'] = {}): Call => ({
      method,
      path,
      url: `${adminBase}${url}`,
      init: { method, ...init },
    });
    const key = 'openapi-main-event';
    const trayCalls: Call[] = [
      tray$('GET', '/notifications/v3', undefined, { headers: auth }),
      tray$('GET', '/notifications/v3'),
      tray$('GET', '/notifications/v3/history', undefined, { headers: auth }),
      tray$('GET', '/notifications/v3/history', '/notifications/v3/history?startAfter=x', { headers: auth }),
      tray$('GET', '/notifications/v2/history', '/notifications/v2/history?page=1', { headers: auth }),
      tray$('GET', '/notifications/v2/history', '/notifications/v2/history?page=0', { headers: auth }),
      tray$('GET', '/notifications/v3/mark-all-as-read', undefined, { headers: auth }),
      tray$('GET', '/notifications/v3/mark-all-as-read'),
      tray$('POST', '/notifications/v2/last-read', undefined, { headers: auth }),
      tray$('POST', '/notifications/v2/last-read'),
      tray$('POST', '/notifications/v2/read', undefined, json({ verb: 'mention', targetId: 'm1' }, auth)),
      tray$('POST', '/notifications/v2/read', undefined, json({ verb: 'post', targetId: 'none' }, auth)),
      tray$('POST', '/notifications/v2/read', undefined, {
        body: 'x',
        headers: { ...auth, 'Content-Type': 'text/plain' },
      }),
      tray$('GET', '/notifications/v3/stream', `/notifications/v3/stream?ticket=${data.ticket}`),
      tray$('GET', '/notifications/v3/stream', undefined, {
        headers: { ...auth, 'Last-Event-ID': 'not an id' },
      }),
      tray$('GET', '/notifications/v3/stream', '/notifications/v3/stream?ticket=unknown'),
      tray$('POST', '/notifications/v3/stream-ticket'),
      tray$('POST', '/block/members', undefined, json({ blockUserId: 'u-x1' }, auth)),
      tray$('POST', '/block/members', undefined, json({ blockUserId: [] }, auth)),
      tray$('GET', '/block/members', '/block/members?checkList=u-x1&checkList=u-x2', { headers: auth }),
      tray$('GET', '/block/members', undefined, { headers: auth }),
      tray$('POST', '/block', undefined, json({}, auth)),
      tray$('POST', '/block', undefined, json({ paginationToken: 'x' }, auth)),
      tray$('DELETE', '/block/members', undefined, json({ blockUserId: 'u-x1' }, auth)),
      tray$('DELETE', '/block/members', undefined, {
        body: 'x',
        headers: { ...auth, 'Content-Type': 'text/plain' },
      }),
      tray$('GET', '/notifications/v3/history', '/notifications/v3/history?view=all', { headers: auth }),
      tray$('POST', '/notifications/v3/records/seen', undefined, json({ all: true }, auth)),
      tray$('POST', '/notifications/v3/records/seen', undefined, json({}, auth)),
      tray$(
        'POST',
        '/notifications/v3/records/archive',
        undefined,
        json({ all: true, readOnly: true }, auth),
      ),
      tray$(
        'POST',
        '/notifications/v3/records/archive',
        undefined,
        json({ ids: ['x'], readOnly: true }, auth),
      ),
      tray$('POST', '/notifications/v3/records/unarchive', undefined, json({ ids: ['x'] }, auth)),
      tray$('POST', '/notifications/v3/records/unarchive', undefined, json({ all: true }, auth)),
      tray$(
        'POST',
        '/notifications/v3/records/snooze',
        undefined,
        json({ ids: [`mention_m1_${user}`], until: Date.now() + 60_000 }, auth),
      ),
      tray$('POST', '/notifications/v3/records/snooze', undefined, json({ ids: ['x'], until: 1 }, auth)),
      tray$(
        'POST',
        '/notifications/v3/records/unsnooze',
        undefined,
        json({ ids: [`mention_m1_${user}`] }, auth),
      ),
      tray$('POST', '/notifications/v3/records/unsnooze', undefined, json({}, auth)),
      tray$('PUT', '/notifications/v3/mutes', undefined, json({ targetType: 'post', targetId: 'p1' }, auth)),
      tray$(
        'PUT',
        '/notifications/v3/mutes',
        undefined,
        json({ targetType: 'thread', targetId: 'p1' }, auth),
      ),
      tray$('GET', '/notifications/v3/mutes', undefined, { headers: auth }),
      tray$('GET', '/notifications/v3/mutes'),
      tray$('DELETE', '/notifications/v3/mutes', '/notifications/v3/mutes?targetType=post&targetId=p1', {
        headers: auth,
      }),
      tray$('DELETE', '/notifications/v3/mutes', undefined, json({ targetType: 'post' }, auth)),
      tray$('DELETE', '/notifications/v3/delete-all', undefined, { headers: auth }),
      tray$('DELETE', '/notifications/v3/delete-all'),
      tray$('GET', '/healthz'),
      tray$('GET', '/readyz'),
      tray$('GET', '/metrics', undefined, { headers: { Authorization: `Bearer ${trayMetricsToken}` } }),
      tray$('GET', '/metrics'),
      tray$('GET', '/openapi.json'),
    ];
    const adminCalls: Call[] = [
      admin$('GET', '/admin/events', undefined, { headers: admin }),
      admin$('GET', '/admin/events', '/admin/events?since=yesterday', { headers: admin }),
      admin$('GET', '/admin/events'),
      admin$('GET', '/admin/events/export', undefined, { headers: admin }),
      admin$('GET', '/admin/events/export', '/admin/events/export?format=csv', { headers: admin }),
      admin$('GET', '/admin/events/export', '/admin/events/export?limit=1', { headers: admin }),
      admin$('GET', '/admin/events/export/check', undefined, { headers: admin }),
      admin$('GET', '/admin/events/export/check', '/admin/events/export/check?limit=1', { headers: admin }),
      admin$('GET', '/admin/events/{key}', `/admin/events/${key}`, { headers: admin }),
      admin$('GET', '/admin/events/{key}', '/admin/events/no-such-key', { headers: admin }),
      admin$('GET', '/admin/events/{key}/recipients', `/admin/events/${key}/recipients`, { headers: admin }),
      admin$('GET', '/admin/events/{key}/recipients', '/admin/events/nope/recipients', { headers: admin }),
      admin$('GET', '/admin/events/{key}/tray-changes', `/admin/events/${key}/tray-changes`, {
        headers: admin,
      }),
      admin$('GET', '/admin/events/{key}/tray-changes', '/admin/events/nope/tray-changes', {
        headers: admin,
      }),
      admin$('GET', '/admin/events/{key}/tray-changes', `/admin/events/${key}/tray-changes?cursor=%7E`, {
        headers: admin,
      }),
      admin$('GET', '/admin/events/tail', '/admin/events/tail?event=post.didCreate', { headers: admin }),
      admin$('GET', '/admin/events/tail', '/admin/events/tail?status=lost', { headers: admin }),
      admin$('POST', '/admin/events/replay', undefined, json({ userId: 'u-ana' }, admin)),
      admin$('POST', '/admin/events/replay', undefined, json({ bad: 1 }, admin)),
      admin$('POST', '/admin/events/{key}/replay', `/admin/events/${key}/replay`, { headers: admin }),
      admin$('POST', '/admin/events/{key}/replay', '/admin/events/nope/replay', { headers: admin }),
      admin$('GET', '/admin/replays/{id}', '/admin/replays/nope', { headers: admin }),
      admin$('GET', '/admin/moderation/decisions', undefined, { headers: admin }),
      admin$('GET', '/admin/moderation/decisions', '/admin/moderation/decisions?action=ban', {
        headers: admin,
      }),
      admin$('POST', '/admin/moderation/test', undefined, json({ text: 'Trail open' }, admin)),
      admin$('POST', '/admin/moderation/test', undefined, json({ text: 'x' }, session)),
      admin$('GET', '/admin/session', undefined, { headers: session }),
      admin$('GET', '/admin/session', undefined, { headers: admin }),
      admin$('GET', '/admin/stats/events-per-minute', undefined, { headers: admin }),
      admin$('GET', '/admin/stats/events-per-minute', '/admin/stats/events-per-minute?since=x', {
        headers: admin,
      }),
      admin$('GET', '/admin/stats/lag', undefined, { headers: admin }),
      admin$('GET', '/admin/stats/lag', '/admin/stats/lag?until=2026-02-30', { headers: admin }),
      admin$('GET', '/admin/stats/queue', undefined, { headers: admin }),
      admin$('GET', '/admin/stats/queue', '/admin/stats/queue?x=1', { headers: admin }),
    ];

    onTray.expectMatches(await answer(ticket), 'POST', '/notifications/v3/stream-ticket');
    for (const [validator, calls] of [
      [onTray, trayCalls],
      [onAdmin, adminCalls],
    ] as const) {
      for (const call of calls) {
        const res = await answer(
          await fetch(call.url, { ...call.init, redirect: 'manual', signal: AbortSignal.timeout(10_000) }),
        );
        validator.expectMatches(res, call.method, call.path);
        // The stream's events: each one's data as the document declares it (x-events).
        for (const { event, data: eventData } of res.events) {
          const component = event === 'record' ? 'NotificationRecord' : `StreamEvent_${event}`;
          const ref = call.path.startsWith('/admin')
            ? '#/components/schemas/AdminEvent'
            : `#/components/schemas/${component}`;
          validator.expectValid(eventData, ref, `${call.method} ${call.path} event ${event}`);
        }
        if (call.path === '/admin/events/replay' && res.status === 202) {
          const started = res.body as { id: string };
          const progress = await answer(
            await fetch(`${adminBase}/admin/replays/${started.id}`, { headers: admin }),
          );
          onAdmin.expectMatches(progress, 'GET', '/admin/replays/{id}');
        }
      }
    }

    // Every operation of both documents was answered both ways (probes and the document: success only).
    const answered = [...onTray.matched, ...onAdmin.matched];
    const missing = [trayDoc, adminDoc]
      .flatMap((document) => documentedRoutes(document as { paths: Record<string, object> }))
      .flatMap((route) => {
        const statuses = answered
          .filter((entry) => entry.startsWith(`${route} `))
          .map((entry) => Number(entry.split(' ')[2]));
        return [
          ...(statuses.some((status) => status < 400) ? [] : [`${route}: no success`]),
          ...(successOnly.has(route) || statuses.some((status) => status >= 400)
            ? []
            : [`${route}: no error`]),
        ];
      });
    expect(missing).to.deep.equal([]);
  });
});
