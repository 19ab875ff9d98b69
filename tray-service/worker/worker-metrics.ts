import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface WorkerMetrics {
  jobs: Counter<'outcome'>;
  events: Counter<'status'>;
  duration: Histogram;
  gateOpen: Gauge;
}

/** Worker metrics on the service's registry (served at /metrics). Safe to call once per registry. */
export function createWorkerMetrics(registry: Registry): WorkerMetrics {
  const existing = registry.getSingleMetric('tray_worker_jobs_total');
  if (existing) {
    return {
      jobs: existing as Counter<'outcome'>,
      events: registry.getSingleMetric('tray_worker_events_total') as Counter<'status'>,
      duration: registry.getSingleMetric('tray_worker_job_duration_seconds') as Histogram,
      gateOpen: registry.getSingleMetric('tray_worker_storage_gate_open') as Gauge,
    };
  }
  return {
    jobs: new Counter({
      name: 'tray_worker_jobs_total',
      help: 'Queue jobs handled by the tray worker, by outcome (completed; failed: retried with backoff; dead_lettered: its last attempt failed, left in the failed set, replayable; stalled_out: failed by bull for stalling too often; completion_unrecorded: finished and counted completed, but bull could not record it and failed it instead, its rerun a no-op)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    events: new Counter({
      name: 'tray_worker_events_total',
      help: 'Events stored by the tray worker, each once (by the job that first finished it; not one an admin replay finished first), by status (applied, stored, unknown, invalid, foreign)',
      labelNames: ['status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'tray_worker_job_duration_seconds',
      help: 'Time spent processing one queue job (store, map, apply), its runs added up: waits for the storage (an outage, a busy database) are left out',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    // The jobs this worker holds during its outage stay active here, their locks renewed, until
    // its own probe reaches the storage again: a worker whose path alone is broken (a sidecar
    // proxy down) holds them while the others are idle. This says so without reading the logs.
    gateOpen: new Gauge({
      name: 'tray_worker_storage_gate_open',
      help: '1 while this worker takes jobs; 0 while its storage does not answer it (it takes none, and the jobs it holds wait here for the storage)',
      registers: [registry],
    }),
  };
}
