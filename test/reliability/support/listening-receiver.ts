import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { dedupeMarkKey } from '../../../receiver/store/enqueue-once.ts';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import {
  queuedJobIds,
  startTestReceiver,
  type ReceiverOptions,
  type TestReceiver,
} from '../../receiver/support/use-receiver.ts';

export interface ListeningReceiver {
  readonly receiver: TestReceiver;
  readonly server: Server;
  readonly port: number;
}

/**
 * A wired receiver (real Redis, own queue prefix and spool) behind a real HTTP server on 127.0.0.1,
 * with the slowloris limits main.ts sets unless overridden: raw-socket tests need a port.
 */
export function useListeningReceiver(
  options: ReceiverOptions & { headersTimeoutMs?: number; requestTimeoutMs?: number } = {},
): () => ListeningReceiver {
  let listening: ListeningReceiver | undefined;
  before(async () => {
    const receiver = await startTestReceiver(useQueuePrefix(), options);
    const server = await listen(receiver.app, {
      port: await freePort(),
      host: '127.0.0.1',
      headersTimeoutMs: options.headersTimeoutMs ?? 5_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
    });
    listening = { receiver, server, port: (server.address() as AddressInfo).port };
  });
  after(async () => {
    if (!listening) return;
    // The server first: requests in flight may still enqueue or spool.
    await closeServer(listening.server, 1_000);
    await listening.receiver.close();
    rmSync(listening.receiver.spoolDir, { recursive: true, force: true });
  });
  return () => {
    if (!listening) throw new Error('useListeningReceiver: used before the suite started');
    return listening;
  };
}

/** Every job id in the queue and every dedupe mark: both must stay empty after unverified input. */
export async function queueFootprint(receiver: TestReceiver): Promise<{ jobs: string[]; marks: string[] }> {
  const jobs = await queuedJobIds(receiver);
  const marks = await receiver.queue.client.keys(dedupeMarkKey(receiver.prefix, '*'));
  return { jobs, marks: marks.sort() };
}

/**
 * The queued job of an accepted event, or null when there is none. An event the receiver spooled
 * (a call to Redis past the test receiver's short budget, on a loaded machine) was answered 200
 * before it was queued: the drainer queues it moments later, so the spool's drain is waited for
 * (5 s at most) before the queue is asked again.
 */
export async function queuedJob(receiver: TestReceiver, id: string) {
  const job = await receiver.queue.queue.getJob(id);
  if (job !== null || receiver.spool.depth() === 0) return job;
  const until = Date.now() + 5_000;
  while (receiver.spool.depth() > 0 && Date.now() < until) await sleep(20);
  return receiver.queue.queue.getJob(id);
}
