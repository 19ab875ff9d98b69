import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type DropReason = 'legacy' | 'duplicate';
export type RejectReason =
  | 'forbidden'
  | 'unsupported_media_type'
  | 'too_large'
  | 'bad_signature'
  | 'bad_envelope'
  | 'bad_request'
  | 'spool_unavailable'
  | 'spool_full'
  | 'spool_late'
  /** A bug, answered 500: counted so an alert on the refusals or the 5xx answers sees it. */
  | 'internal';
export type StoredIn = 'queue' | 'spool';

export interface ReceiverMetrics {
  received: Counter<never>;
  accepted: Counter<'stored_in'>;
  dropped: Counter<'reason'>;
  rejected: Counter<'reason'>;
  enqueueSeconds: Histogram<'outcome'>;
  ackSeconds: Histogram<'status'>;
  spoolDrained: Counter<'outcome'>;
}

/** The receiver's metrics, on the app's own registry (docs/receiver.md#metrics-readiness-and-shutdown). */
export function createReceiverMetrics(
  registry: Registry,
  spoolDepth: () => number,
  spoolForeignEntries: () => number = () => 0,
): ReceiverMetrics {
  const registers = [registry];
  new Gauge({
    name: 'webhook_spool_depth',
    help: 'Events in the local spool waiting for Redis',
    registers,
    collect() {
      this.set(spoolDepth());
    },
  });
  new Gauge({
    name: 'webhook_spool_foreign_entries',
    help: 'Entries of SPOOL_DIR named like spool files that the receiver left alone at start-up: another user wrote them',
    registers,
    collect() {
      this.set(spoolForeignEntries());
    },
  });
  return {
    received: new Counter({ name: 'webhook_received_total', help: 'POSTs to the webhook path', registers }),
    accepted: new Counter({
      name: 'webhook_accepted_total',
      help: 'Events acknowledged with 200 and stored, by where (queue or spool)',
      labelNames: ['stored_in'],
      registers,
    }),
    dropped: new Counter({
      name: 'webhook_dropped_total',
      help: 'Deliveries answered 200 without queueing, by reason (legacy duplicate, redelivery)',
      labelNames: ['reason'],
      registers,
    }),
    rejected: new Counter({
      name: 'webhook_rejected_total',
      help: 'Deliveries refused with an error status, by reason',
      labelNames: ['reason'],
      registers,
    }),
    enqueueSeconds: new Histogram({
      name: 'webhook_enqueue_duration_seconds',
      help: 'Time to dedupe-check and enqueue one event, by outcome (queued, duplicate, failed)',
      labelNames: ['outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1],
      registers,
    }),
    ackSeconds: new Histogram({
      name: 'webhook_ack_duration_seconds',
      help: 'Time from request start to the answer on the webhook path, by status',
      labelNames: ['status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 3],
      registers,
    }),
    spoolDrained: new Counter({
      name: 'webhook_spool_drained_total',
      help: 'Spooled events moved out of the spool, by outcome (queued, duplicate)',
      labelNames: ['outcome'],
      registers,
    }),
  };
}
