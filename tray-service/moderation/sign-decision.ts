import { createHmac } from 'node:crypto';

/** Unix seconds at which the decision was sent: part of what is signed, so a replay shows its age. */
export const DECISION_TIMESTAMP_HEADER = 'x-moderation-timestamp';
/** `v1=` and the hex HMAC-SHA256 of `${timestamp}.${body}` (docs/operations.md#moderation). */
export const DECISION_SIGNATURE_HEADER = 'x-moderation-signature';

/**
 * The headers that let a decision's receiver check it came from this service and was sent within
 * its tolerance window: the body alone could be replayed forever, so the timestamp is signed too.
 * `v1=` names the scheme, so another can be added beside it later.
 */
export function signDecision(secret: string, timestampSeconds: number, body: string): Record<string, string> {
  const mac = createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex');
  return {
    [DECISION_TIMESTAMP_HEADER]: String(timestampSeconds),
    [DECISION_SIGNATURE_HEADER]: `v1=${mac}`,
  };
}
