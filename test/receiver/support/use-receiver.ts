import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseCidrList } from '../../../shared/address/parse-cidr.ts';
import { parseTrustProxy } from '../../../receiver/address/parse-trust-proxy.ts';
import { createAllowlist } from '../../../receiver/allowlist/create-allowlist.ts';
import { parseRegions } from '../../../receiver/allowlist/parse-regions.ts';
import type { WebhookSettings } from '../../../receiver/http/create-webhook-handler.ts';
import { loadReceiverConfig } from '../../../receiver/receiver-config.ts';
import { wireReceiver, type Receiver } from '../../../receiver/wire-receiver.ts';
import type { MetricsAccess } from '../../../shared/http/metrics-access.ts';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { testSecret } from './signed-request.ts';

export interface ReceiverOptions {
  /** WEBHOOK_ENQUEUE_TIMEOUT_MS (300 unless given). */
  enqueueTimeoutMs?: number;
  /** Comma-separated CIDRs; the default lets the test client (loopback) in. `off` disables the check. */
  allow?: string;
  /**
   * WEBHOOK_REGIONS (`sg,eu,us`): the allowlist is then built as main.ts builds it, the regions'
   * addresses plus `allow` as WEBHOOK_ALLOW_CIDRS (default: none).
   */
  regions?: string;
  trustProxy?: string;
  secrets?: string;
  /** WEBHOOK_SIGNATURE_SCHEME and WEBHOOK_SIGNATURE_HEADER, read with `secrets` as main.ts reads them. */
  schemes?: string;
  headers?: string;
  timestampToleranceSeconds?: number;
  maxBodyBytes?: number;
  redisUrl?: string;
  /** WEBHOOK_PATH (default `/webhooks`). */
  webhookPath?: string;
  spoolDir?: string;
  drainIntervalMs?: number;
  /** How long a call may stay unanswered before the Redis connection is dropped (wiring default: 5 s). */
  hungRedisReconnectMs?: number;
  /** Resolve before Redis answers (default: wait until the queue connection is ready). */
  noWait?: boolean;
  /** Who may read /metrics on the receiver's port (default: anyone, as on METRICS_PORT). */
  metrics?: MetricsAccess;
  /** Collects the receiver's log lines, from level info (default: TEST_LOG's level, else none). */
  logLines?: string[];
}

/** Settings as main.ts builds them from configuration, with test defaults. */
export function testSettings(options: ReceiverOptions = {}): WebhookSettings {
  return {
    allowlist:
      options.regions !== undefined
        ? createAllowlist(parseRegions(options.regions), parseCidrList(options.allow ?? ''))
        : options.allow === 'off'
          ? undefined
          : parseCidrList(options.allow ?? '127.0.0.1'),
    trustProxy: parseTrustProxy(options.trustProxy ?? 'off'),
    secrets: loadReceiverConfig({
      WEBHOOK_SECRETS: options.secrets ?? testSecret,
      WEBHOOK_SIGNATURE_SCHEME: options.schemes,
      WEBHOOK_SIGNATURE_HEADER: options.headers,
    }).WEBHOOK_SECRETS,
    ...(options.timestampToleranceSeconds === undefined
      ? {}
      : { timestampToleranceSeconds: options.timestampToleranceSeconds }),
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
  };
}

export interface TestReceiver extends Receiver {
  readonly prefix: string;
  readonly spoolDir: string;
  readonly registry: ReturnType<typeof createMetricsRegistry>;
}

const testLogger = () =>
  createLogger({ name: 'test', level: (process.env.TEST_LOG as 'debug' | undefined) ?? 'silent' });

/** The receiver's logger, writing its lines into `lines` instead of stdout. */
function collectingLogger(lines: string[]) {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return createLogger({ name: 'test', level: 'info', destination });
}

/** A fully wired receiver over real Redis with its own queue prefix and spool directory. */
export async function startTestReceiver(
  prefix: string,
  options: ReceiverOptions = {},
): Promise<TestReceiver> {
  const spoolDir = options.spoolDir ?? mkdtempSync(join(tmpdir(), 'receiver-spool-'));
  const registry = createMetricsRegistry('receiver', false);
  const receiver = await wireReceiver({
    redis: options.redisUrl ?? testStack().redisUrl,
    queuePrefix: prefix,
    spoolDir,
    webhookPath: options.webhookPath ?? '/webhooks',
    dedupeSeconds: 86_400,
    enqueueTimeoutMs: options.enqueueTimeoutMs ?? 300,
    settings: testSettings(options),
    logger: options.logLines ? collectingLogger(options.logLines) : testLogger(),
    registry,
    metrics: options.metrics ?? { kind: 'open' },
    drainIntervalMs: options.drainIntervalMs ?? 200,
    ...(options.hungRedisReconnectMs === undefined
      ? {}
      : { hungRedisReconnectMs: options.hungRedisReconnectMs }),
  });
  // The receiver starts without waiting for Redis (it spools until then); tests start with it connected.
  if (!options.noWait && receiver.queue.client.status !== 'ready') {
    await new Promise((resolve) => receiver.queue.client.once('ready', resolve));
  }
  return { ...receiver, prefix, spoolDir, registry };
}

/** Registers hooks giving the enclosing `describe` a receiver (fresh queue prefix, own spool). */
export function useReceiver(options: ReceiverOptions = {}): () => TestReceiver {
  let receiver: TestReceiver | undefined;
  before(async () => {
    receiver = await startTestReceiver(useQueuePrefix(), options);
  });
  after(async () => {
    if (!receiver) return;
    await receiver.close();
    rmSync(receiver.spoolDir, { recursive: true, force: true });
  });
  return () => {
    if (!receiver) throw new Error('useReceiver: used before the suite started');
    return receiver;
  };
}

/** Ids of every job in the receiver's queue, whatever its state. */
export async function queuedJobIds(receiver: Receiver): Promise<string[]> {
  const jobs = await receiver.queue.queue.getJobs([
    'waiting',
    'active',
    'delayed',
    'completed',
    'failed',
    'paused',
  ]);
  return jobs.map((job) => String(job.id)).sort();
}
