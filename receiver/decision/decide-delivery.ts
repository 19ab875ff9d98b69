import type { DeliveryDecider, DeliveryHead, HeadVerdict, BodyVerdict } from './create-delivery-decider.ts';

/** A request whose body is already in memory (a serverless function, a test, a replayed capture). */
export interface BufferedDelivery extends DeliveryHead {
  readonly body: Buffer;
}

/**
 * The whole decision on one delivery whose body is known: checks 1-3 on the head, then 4-5 on the
 * body. The receiver's own HTTP handler streams the body, so it calls `screen` and `judge` with the
 * read in between; this is the same composition for adapters that already hold the body.
 */
export function decideDelivery(
  decider: DeliveryDecider,
  request: BufferedDelivery,
): Exclude<HeadVerdict, { verdict: 'read-body' }> | BodyVerdict {
  const head = decider.screen(request);
  if (head.verdict !== 'read-body') return head;
  return decider.judge(request.body, request.headers);
}
