import { Counter, Gauge, type Registry } from 'prom-client';

export interface StreamMetrics {
  events: Counter<'event'>;
}

/** Live stream metrics on the service's registry (served at /metrics). */
export function createStreamMetrics(registry: Registry, openStreams: () => number): StreamMetrics {
  const existing = registry.getSingleMetric('tray_stream_events_total');
  if (existing) return { events: existing as Counter<'event'> };
  new Gauge({
    name: 'tray_streams_open',
    help: 'Live streams (GET /notifications/v3/stream) open on this instance',
    registers: [registry],
    collect() {
      this.set(openStreams());
    },
  });
  return {
    events: new Counter({
      name: 'tray_stream_events_total',
      help: 'Server-sent events written to live streams, by event name (the stream protocol’s fixed set: docs/live-tray.md)',
      labelNames: ['event'],
      registers: [registry],
    }),
  };
}
