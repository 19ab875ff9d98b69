import { expect } from 'chai';
import express from 'express';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { requestMetrics } from '../../../tray-service/http/request-metrics.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('requestMetrics', () => {
  let server: Server | undefined;
  /** Each request as the handlers see it arrive, by path. */
  let arrived: string[] = [];
  afterEach(async () => {
    const running = server;
    server = undefined;
    arrived = [];
    if (!running) return;
    running.closeAllConnections();
    await new Promise((done) => running.close(done));
  });

  /** An app with a stream that never ends by itself and a call that never answers, on loopback. */
  const serve = async (registry: Registry, routes: readonly string[] = ['/stream', '/hang', '/ok']) => {
    const app = express();
    app.use(requestMetrics(registry, new Set(routes)));
    app.use((req, _res, next) => {
      arrived.push(req.path);
      next();
    });
    app.get('/stream', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(': open\n\n');
    });
    app.get('/hang', () => undefined);
    app.get('/ok', (_req, res) => res.json({ ok: true }));
    app.get('/block', (_req, res) => res.json({ ok: true }));
    server = createServer(app);
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    return (server.address() as AddressInfo).port;
  };

  /** GETs `path` and goes away once the server has it, as a closed tab does. */
  const leaveOnceArrived = async (port: number, path: string) => {
    const req = httpRequest({ host: '127.0.0.1', port, path });
    req.on('error', () => undefined);
    req.end();
    await waitFor(() => arrived.includes(path), 5_000, `${path} arrived`);
    req.destroy();
  };

  const counted = async (registry: Registry, route: string, status: string) => {
    const metric = await registry.getSingleMetric('tray_api_requests_total')?.get();
    return (
      metric?.values.find((value) => value.labels.route === route && value.labels.status === status)?.value ??
      0
    );
  };

  // Node takes some 34 methods (PROPFIND, MKCOL, PURGE...); each was a series of its own, on every
  // route, for any client to make, times every status and histogram bucket.
  it('labels a method the API does not serve "other"', async () => {
    const registry = new Registry();
    const port = await serve(registry);
    for (const method of ['PROPFIND', 'MKCOL', 'PURGE', 'GET'])
      await new Promise<void>((done) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/ok', method }, (res) => {
          res.resume();
          res.on('end', done);
        });
        req.end();
      });
    const byMethod = async () => {
      const metric = await registry.getSingleMetric('tray_api_requests_total')?.get();
      return (metric?.values ?? []).map((value) => [String(value.labels.method), value.value] as const);
    };
    // Counted when each connection's response closes, just after the client has its answer.
    await waitFor(async () => (await byMethod()).reduce((sum, [, n]) => sum + n, 0) === 4, 5_000, 'counted');
    expect(Object.fromEntries(await byMethod())).to.deep.equal({ GET: 1, other: 3 });
  });

  // Express serves a route in any case and with one trailing slash: those were served yet
  // labelled "unmatched", beside the scanners' 404s that label is there to show.
  it('labels a route Express serves in another case or with a trailing slash by its own path', async () => {
    const registry = new Registry();
    const port = await serve(registry);
    for (const path of ['/ok', '/OK', '/ok/', '/nowhere'])
      await new Promise<void>((done) => {
        const req = httpRequest({ host: '127.0.0.1', port, path }, (res) => {
          res.resume();
          res.on('end', done);
        });
        req.end();
      });
    await waitFor(async () => (await counted(registry, '/ok', '200')) === 3, 5_000, 'three counted as /ok');
    expect(await counted(registry, 'unmatched', '404')).to.equal(1);
  });

  // The block router lists both '' and '/' (mounted: /block and /block/), one route to Express;
  // the later one won, and GET /block was counted as "/block/".
  for (const routes of [
    ['/block', '/block/', '/block/members'],
    ['/block/', '/block', '/block/members'],
  ])
    it(`labels a route listed with and without a trailing slash by the path without (${routes.join(' ')})`, async () => {
      const registry = new Registry();
      const port = await serve(registry, routes);
      for (const path of ['/block', '/block/'])
        await fetch(`http://127.0.0.1:${port}${path}`).then((res) => res.text());
      await waitFor(
        async () => (await counted(registry, '/block', '200')) === 2,
        5_000,
        'both counted as /block',
      );
      expect(await counted(registry, '/block/', '200')).to.equal(0);
    });

  // A stream the client ends emits no 'finish': such streams were never counted, most of them.
  it('counts a stream its client left, once, as the 200 it was, with no latency', async () => {
    const registry = new Registry();
    const port = await serve(registry);
    await leaveOnceArrived(port, '/stream');
    await waitFor(async () => (await counted(registry, '/stream', '200')) > 0, 5_000, 'the stream counted');
    // Counted once: 'finish' never follows, and 'close' does not count it again.
    await new Promise((done) => setTimeout(done, 100));
    expect(await counted(registry, '/stream', '200')).to.equal(1);
    const latency = await registry.getSingleMetric('tray_api_request_duration_seconds')?.get();
    expect(latency?.values.filter((value) => value.labels.route === '/stream')).to.deep.equal([]);
  });

  it('counts a call its client left before any answer as 499, and an answered one once', async () => {
    const registry = new Registry();
    const port = await serve(registry);
    await leaveOnceArrived(port, '/hang');
    await fetch(`http://127.0.0.1:${port}/ok`).then((res) => res.text());
    await waitFor(async () => (await counted(registry, '/hang', '499')) > 0, 5_000, 'the call left counted');
    await waitFor(
      async () => (await counted(registry, '/ok', '200')) > 0,
      5_000,
      'the answered call counted',
    );
    await new Promise((done) => setTimeout(done, 100));
    expect(await counted(registry, '/hang', '499')).to.equal(1);
    expect(await counted(registry, '/hang', '200')).to.equal(0);
    expect(await counted(registry, '/ok', '200')).to.equal(1);
  });
});
