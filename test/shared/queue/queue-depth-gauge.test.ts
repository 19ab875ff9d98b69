import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { createWebhookQueue } from '../../../shared/queue/webhook-queue.ts';
import {
  QUEUE_COUNTS_TIMEOUT_MS,
  queueGaugeNames,
  registerQueueDepthGauge,
} from '../../../shared/queue/queue-depth-gauge.ts';
import { startBlackholeProxy } from '../../support/blackhole-proxy.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';

/** The gauge's series of one scrape, as `state` -> value, for `queue`. */
async function scrape(registry: Registry, queue: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === queueGaugeNames.tray);
  const series: Record<string, number> = {};
  for (const value of (metric?.values ?? []) as { labels: Record<string, string>; value: number }[]) {
    if (value.labels['queue'] === queue) series[String(value.labels['state'])] = value.value;
  }
  return series;
}

describe('the queue depth gauge (real Redis)', () => {
  it('reports each state’s jobs of every queue it is given, read at each scrape', async () => {
    const prefix = useQueuePrefix();
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    const other = createWebhookQueue({ redis: testStack().redisUrl, prefix }, 'other-queue');
    try {
      const registry = new Registry();
      registerQueueDepthGauge(registry, queueGaugeNames.tray, [queue, other]);
      await queue.add({ key: 'k-1' } as never, { jobId: 'k-1' });
      await queue.add({ key: 'k-2' } as never, { jobId: 'k-2', delay: 60_000 });
      await other.add({ key: 'k-3' } as never, { jobId: 'k-3' });
      expect(await scrape(registry, queue.name)).to.deep.equal({
        waiting: 1,
        active: 0,
        paused: 0,
        delayed: 1,
        failed: 0,
        completed: 0,
      });
      expect((await scrape(registry, 'other-queue'))['waiting']).to.equal(1);
      await queue.add({ key: 'k-4' } as never, { jobId: 'k-4' });
      expect((await scrape(registry, queue.name))['waiting']).to.equal(2);
    } finally {
      await other.close();
      await queue.close();
    }
  });

  it('leaves the series out of a scrape Redis does not answer within its timeout, and serves the rest', async () => {
    const redisPort = Number(new URL(testStack().redisUrl).port);
    const proxy = await startBlackholeProxy(redisPort);
    const queue = createWebhookQueue({ redis: `redis://127.0.0.1:${proxy.port}`, prefix: useQueuePrefix() });
    try {
      const registry = new Registry();
      registerQueueDepthGauge(registry, queueGaugeNames.tray, [queue]);
      new Counter({ name: 'tray_other_total', help: 'another metric', registers: [registry] }).inc();
      await queue.add({ key: 'k-1' } as never, { jobId: 'k-1' });
      expect((await scrape(registry, queue.name))['waiting']).to.equal(1);
      proxy.blackhole();
      const started = Date.now();
      expect(await scrape(registry, queue.name)).to.deep.equal({});
      const elapsed = Date.now() - started;
      expect(await registry.metrics()).to.match(/^tray_other_total 1$/m);
      expect(elapsed).to.be.within(QUEUE_COUNTS_TIMEOUT_MS - 50, QUEUE_COUNTS_TIMEOUT_MS + 1_000);
    } finally {
      await Promise.race([queue.close(), new Promise((resolve) => setTimeout(resolve, 500))]);
      await proxy.close();
    }
  });
});
