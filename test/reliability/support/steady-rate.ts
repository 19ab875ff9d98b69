import { sign } from '../../receiver/support/signed-request.ts';
import { splitLeading, type BurstBody, type Delivery, type LeadingOptions } from './burst.ts';
import { postSigned } from './post-signed.ts';

export interface SteadyRateOptions extends LeadingOptions {
  /** Receiver URLs; each event goes to every one of them at once (a redelivery racing itself). */
  urls: readonly string[];
  secret: string;
  /** Events started per second, evenly spaced, whatever the answers take. */
  perSecond: number;
  /** Called once event `index` has been started (e.g. to inject a fault part-way). */
  onStarted?: (index: number) => void;
}

/**
 * Sends the signed events at a steady rate, as the platform does, instead of as fast as answers
 * come back: a slow answer (an enqueue that timed out into the spool) then shows in its own
 * latency and does not hold back the events after it. Each request is attempted once and bounded.
 * The leading events go first and are settled before the rest starts (splitLeading); the rest keeps
 * the rate from then on, and `onStarted` counts across both.
 */
export async function sendAtSteadyRate(
  events: readonly BurstBody[],
  options: SteadyRateOptions,
): Promise<Delivery[]> {
  const { leading } = splitLeading(events, options);
  const deliveries: Delivery[] = [];
  const intervalMs = 1_000 / options.perSecond;
  let started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (const [index, event] of events.entries()) {
    if (index === leading.length && index > 0) {
      await Promise.all(inFlight);
      await options.settleLeading?.();
      started = performance.now() - index * intervalMs;
    }
    const due = started + index * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const signature = sign(event.body, options.secret);
    for (const url of options.urls) {
      inFlight.push(
        (async () => {
          const answer = await postSigned(url, event.body, signature);
          deliveries.push({
            id: event.id,
            status: answer.status,
            ms: answer.ms,
            answeredAt: answer.answeredAt,
          });
        })(),
      );
    }
    options.onStarted?.(index);
  }
  await Promise.all(inFlight);
  return deliveries;
}
