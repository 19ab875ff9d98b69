import { expect } from 'chai';
import type { Registry } from 'prom-client';
import { createReceiverMetrics } from '../../receiver/receiver-metrics.ts';
import { createHealthRouter } from '../../shared/http/health-router.ts';
import { createMetricsRegistry } from '../../shared/http/metrics-router.ts';
import { createLogger } from '../../shared/logging/create-logger.ts';
import { queueGaugeNames, registerQueueDepthGauge } from '../../shared/queue/queue-depth-gauge.ts';
import { requestMetrics } from '../../tray-service/http/request-metrics.ts';
import { createStreamMetrics } from '../../tray-service/live/stream-metrics.ts';
import { createWorkerMetrics } from '../../tray-service/worker/worker-metrics.ts';
import { readRepositoryFile, repositoryFiles } from '../support/repository-files.ts';

/**
 * Every metric the documentation names is one a service registers: a renamed or removed metric
 * cannot stay on a page that tells operators what to graph and alert on.
 */

const silent = createLogger({ name: 'test', level: 'silent' });

/** The modules that register metrics, each called as the services call it. */
const registrations: Readonly<Record<string, (registry: Registry) => unknown>> = {
  'receiver/receiver-metrics.ts': (registry) => createReceiverMetrics(registry, () => 0),
  'tray-service/http/request-metrics.ts': (registry) => requestMetrics(registry, new Set()),
  'tray-service/worker/worker-metrics.ts': (registry) => createWorkerMetrics(registry),
  'tray-service/live/stream-metrics.ts': (registry) => createStreamMetrics(registry, () => 0),
  'shared/http/health-router.ts': (registry) => createHealthRouter({}, { logger: silent, registry }),
  'shared/queue/queue-depth-gauge.ts': (registry) => {
    for (const name of Object.values(queueGaugeNames)) registerQueueDepthGauge(registry, name, []);
  },
};

/** The names a scrape shows: each metric's, and a histogram's or summary's series. */
async function registeredNames(): Promise<Set<string>> {
  const registry = createMetricsRegistry('docs'); // with prom-client's defaults, as the services
  for (const register of Object.values(registrations)) register(registry);
  const names = new Set<string>();
  for (const { name, type } of await registry.getMetricsAsJSON()) {
    names.add(name);
    if (['histogram', 'summary'].includes(String(type)))
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/**
 * Words of the metric namespaces that are names in storage instead (tables, indexes, collections):
 * every word of the migrations and of the MongoDB adapter's collection names, and primary keys.
 */
function storageWords(): Set<string> {
  const texts = [
    ...repositoryFiles('tray-service/storage/postgres/migrations').map(readRepositoryFile),
    readRepositoryFile('tray-service/storage/mongodb/collections/collection-names.ts'),
  ];
  const words = new Set(texts.flatMap((text) => text.match(/\b\w+\b/g) ?? []));
  for (const word of [...words]) words.add(`${word}_pkey`);
  return words;
}

const METRIC_WORD = /\b(?:webhook|tray|nodejs|process|readiness)_[a-z0-9_]*[a-z0-9]\b/g;
const documents = [
  'README.md',
  'RELIABILITY.md',
  ...repositoryFiles('docs').filter((file) => file.endsWith('.md')),
];

describe('metric names in the documentation', () => {
  it('every metric a page names is registered by a service', async () => {
    const registered = await registeredNames();
    const storage = storageWords();
    const unknown: string[] = [];
    let checked = 0;
    for (const file of documents)
      for (const [index, line] of readRepositoryFile(file).split('\n').entries())
        for (const [word] of line.matchAll(METRIC_WORD)) {
          if (storage.has(word)) continue;
          checked += 1;
          if (!registered.has(word))
            unknown.push(`${file}:${index + 1}: ${word}: no service registers a metric of that name`);
        }
    expect(checked, 'metric names read').to.be.greaterThan(10);
    expect(unknown).to.deep.equal([]);
  });

  it("knows a histogram's series and prom-client's default metrics", async () => {
    const registered = await registeredNames();
    for (const name of [
      'webhook_ack_duration_seconds_bucket',
      'tray_worker_jobs_total',
      'nodejs_heap_size_used_bytes',
    ])
      expect(registered, name).to.include(name);
    expect(registered).to.not.include('tray_worker_job_total');
  });

  it('builds every module that registers a metric', () => {
    const sources = ['receiver', 'tray-service', 'shared', 'scripts', 'examples'].flatMap((folder) =>
      repositoryFiles(folder).filter((file) => file.endsWith('.ts')),
    );
    const registering = sources.filter((file) =>
      /\bnew (?:Counter|Gauge|Histogram|Summary)\b/.test(readRepositoryFile(file)),
    );
    expect(registering).to.have.members(Object.keys(registrations));
  });
});
