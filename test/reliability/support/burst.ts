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
  /**
   * Processed before any later body is sent (only at the head of a burst): a leave, which the
   * model takes as processed before everything it covers (social-burst.ts). The senders send these,
   * await `settleLeading`, then send the rest.
   */
  readonly leading?: true;
}

/** What a sender does between a burst's leading bodies and the rest. */
export interface LeadingOptions {
  /**
   * Resolves once the leading bodies are processed (leadingProcessed), so no fault and no concurrent
   * job can run one of them after an action it covers; null where the tray is not checked against
   * the model. Required when the burst has leading bodies, so no scenario forgets it.
   */
  settleLeading?: (() => Promise<void>) | null;
}

/** The burst's leading bodies and the rest (BurstBody.leading). */
export function splitLeading(
  events: readonly BurstBody[],
  options: LeadingOptions,
): { leading: readonly BurstBody[]; rest: readonly BurstBody[] } {
  const count = events.findIndex((event) => event.leading !== true);
  const leading = events.slice(0, count === -1 ? events.length : count);
  if (leading.length > 0 && options.settleLeading === undefined)
    throw new Error(
      'the burst leads with bodies to process first: pass settleLeading (null if the tray is not checked)',
    );
  if (events.slice(leading.length).some((event) => event.leading === true))
    throw new Error('leading bodies must come first in the burst');
  return { leading, rest: events.slice(leading.length) };
}

export interface SendOptions extends LeadingOptions {
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

/**
 * Sends the given signed events in order, as sendBurst does (each attempted once, bounded); the
 * leading ones first, then, once settled, the rest (splitLeading).
 */
export async function sendEvents(events: readonly BurstBody[], options: SendOptions): Promise<Delivery[]> {
  const { leading, rest } = splitLeading(events, options);
  const deliveries: Delivery[] = [];
  let acked = 0;
  const sendAll = async (list: readonly BurstBody[]) => {
    let next = 0;
    const worker = async () => {
      while (next < list.length) {
        const event = list[next]!;
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
  };
  await sendAll(leading);
  if (leading.length > 0) await options.settleLeading?.();
  await sendAll(rest);
  return deliveries;
}
