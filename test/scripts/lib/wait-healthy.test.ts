import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitHealthy } from '../../../scripts/lib/wait-healthy.ts';
import { closeServer } from '../../../shared/http/listen.ts';

describe('waitHealthy', function () {
  this.timeout(20_000);
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server) await closeServer(server);
    server = undefined;
  });
  const serve = async (handler: Parameters<typeof createServer>[1]) => {
    server = createServer(handler);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
  };

  it('resolves once the service answers 200, after answers that were not', async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      res.statusCode = ++calls < 3 ? 503 : 200;
      res.end();
    });
    await waitHealthy(url, 5_000);
    expect(calls).to.equal(3);
  });

  it('gives up at its deadline on a service that takes the connection and never answers', async () => {
    const url = await serve(() => undefined);
    const started = performance.now();
    const failed = await waitHealthy(url, 1_000).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    expect(failed).to.equal(`${url} did not answer 200 within 1000 ms`);
    expect(performance.now() - started).to.be.below(2_500);
  });

  it('fails at once on a URL that cannot be built', async () => {
    const started = performance.now();
    await waitHealthy('http://[not-a-host/healthz', 10_000).then(
      () => expect.fail('resolved'),
      (error: Error) => expect(error).to.be.instanceOf(TypeError),
    );
    expect(performance.now() - started).to.be.below(500);
  });
});
