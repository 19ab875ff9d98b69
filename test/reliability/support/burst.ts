import { dedupeKey } from '../../../receiver/dedupe-key.ts';
import { channelDidCreate, sign } from '../../receiver/support/signed-request.ts';
import { postSigned } from './post-signed.ts';

export interface Delivery {
  readonly id: string;
  /** HTTP status, or 0 when the connection failed (receiver killed or not listening). */
  status: number;
  ms: number;
  /** performance.now() when the answer arrived. */
  answeredAt: number;
}

/** One signed delivery's body; `id` is its dedupe key (= bull job id = `_id` in events). */
export interface BurstBody {
  readonly id: string;
  readonly body: string;
}

export interface SendOptions {
  /** Receiver URLs; each event goes to every one of them at once (a redelivery racing itself). */
  urls: readonly string[];
  secret: string;
  concurrency: number;
  /** Called after every answer with the number of 200s so far; may inject a fault (awaited). */
  onAck?: (acked: number) => void | Promise<void>;
}

/** Either `count` distinct channel.didCreate bodies made from `tag`, or prepared `bodies`. */
export type BurstOptions = SendOptions & ({ count: number; tag: string } | { bodies: readonly BurstBody[] });

/** Signed, distinct channel.didCreate bodies; the id is the dedupe key (= bull job id). */
export function burstBodies(tag: string, count: number): BurstBody[] {
  return Array.from({ length: count }, (_, n) => {
    const body = channelDidCreate(`${tag}-${n}`);
    return { id: dedupeKey(Buffer.from(body)), body };
  });
}

/**
 * Sends the signed events with at most `concurrency` requests in flight, each attempted once
 * (the ledger then says what an acknowledgement was worth). Bounded: every request has a timeout.
 */
export async function sendBurst(options: BurstOptions): Promise<Delivery[]> {
  const events = 'bodies' in options ? options.bodies : burstBodies(options.tag, options.count);
  return sendEvents(events, options);
}

/** Sends the given signed events in order, as sendBurst does (each attempted once, bounded). */
export async function sendEvents(events: readonly BurstBody[], options: SendOptions): Promise<Delivery[]> {
  const deliveries: Delivery[] = [];
  let next = 0;
  let acked = 0;
  const worker = async () => {
    while (next < events.length) {
      const event = events[next]!;
      next += 1;
      const signature = sign(event.body, options.secret);
      await Promise.all(
        options.urls.map(async (url) => {
          const { status, ms, answeredAt } = await postSigned(url, event.body, signature);
          deliveries.push({ id: event.id, status, ms, answeredAt });
          if (status === 200) acked += 1;
          await options.onAck?.(acked);
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return deliveries;
}
