import type Bull from 'bull';
import { Gauge, type Registry } from 'prom-client';
import { withTimeout } from '../time/with-timeout.ts';
import { jobCounts, queueStates } from './job-counts.ts';

/**
 * How long a scrape waits for Redis. A Redis that hangs would otherwise hold /metrics, and every
 * other metric with it, until the scraper gives up.
 */
export const QUEUE_COUNTS_TIMEOUT_MS = 1_000;

/**
 * `name{queue, state}`: each queue's jobs by state, read from Redis at each scrape (one MULTI per
 * queue). A backlog (waiting growing while the consumer is down or slow) and dead letters (failed)
 * are what an operator alerts on. Every process holding the queue reports the same figures, so
 * aggregate across instances with max, not sum. When Redis does not answer within
 * QUEUE_COUNTS_TIMEOUT_MS the series are left out of that scrape rather than repeated stale.
 */
/** The gauge's name in each service, beside the service's other metrics. */
export const queueGaugeNames = { receiver: 'webhook_queue_jobs', tray: 'tray_queue_jobs' } as const;

export function registerQueueDepthGauge(
  registry: Registry,
  name: (typeof queueGaugeNames)[keyof typeof queueGaugeNames],
  queues: readonly Bull.Queue<unknown>[],
): void {
  new Gauge({
    name,
    help: 'Jobs in the queue by state (waiting, active, paused, delayed, failed, completed), read from Redis at each scrape',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      try {
        const all = await withTimeout(
          Promise.all(queues.map(async (queue) => ({ queue: queue.name, counts: await jobCounts(queue) }))),
          QUEUE_COUNTS_TIMEOUT_MS,
          'queue counts',
        );
        this.reset();
        for (const { queue, counts } of all) {
          for (const state of queueStates) this.set({ queue, state }, counts[state]);
        }
      } catch {
        this.reset();
      }
    },
  });
}
