import { hash } from 'node:crypto';

/**
 * The dedupe key of a Standard Webhooks delivery: lowercase hex SHA-256 of the webhook's name and
 * the message's `webhook-id`. The id is the same on every retry of a message while its timestamp
 * and signature change, so the body's bytes are not the identity here; the webhook's name keeps
 * two senders' ids apart. Hex SHA-256 like the platform's key (receiver/dedupe-key.ts), so the
 * job id, the dedupe mark and the tools that read them see one format.
 */
export function messageKey(webhook: string, id: string): string {
  return hash('sha256', `standard-webhooks\n${webhook}\n${id}`, 'hex');
}
