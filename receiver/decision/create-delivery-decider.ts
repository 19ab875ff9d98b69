import { clientAddress } from '../address/client-address.ts';
import type { Cidr } from '../../shared/address/parse-cidr.ts';
import type { TrustProxy } from '../address/parse-trust-proxy.ts';
import { isAllowed } from '../allowlist/is-allowed.ts';
import { headerLines } from './header-lines.ts';
import { isJsonContentType } from './is-json-content-type.ts';
import {
  createWebhookVerifier,
  type HeaderValue,
  type VerifierRules,
  type WebhookVerifier,
} from './create-webhook-verifier.ts';
import { refusal, type DropLegacy, type HeadVerdict, type ReadBody } from './delivery-verdict.ts';

export type { Accept, BodyVerdict, DropLegacy, HeadVerdict, ReadBody, Refusal } from './delivery-verdict.ts';

/** What the receiver checks a delivery against (docs/receiver.md, "Order of checks"). */
export interface DeliveryRules extends VerifierRules {
  /** Undefined when WEBHOOK_ALLOWLIST=off (local development only). */
  allowlist: readonly Cidr[] | undefined;
  trustProxy: TrustProxy;
}

/**
 * The parts of a request the decision reads before the body: the connection's address, the
 * headers, and the raw header lines (to see a header sent twice). Node's IncomingMessage is one;
 * a test passes a plain object.
 */
export interface DeliveryHead {
  readonly socket: { readonly remoteAddress?: string | undefined };
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly rawHeaders: readonly string[];
}

export interface DeliveryDecider {
  /** Checks 1-3: source address, legacy duplicate, content type and encoding. */
  screen(head: DeliveryHead): HeadVerdict;
  /** Checks 4-5: signature over the exact bytes, then the envelope (createWebhookVerifier). */
  judge: WebhookVerifier;
}

// The verdicts that carry nothing of their request are built once: the hot path allocates none.
const forbidden = refusal('forbidden', 'FORBIDDEN', 'source address is not allowed');
const unsupportedMediaType = refusal(
  'unsupported_media_type',
  'UNSUPPORTED_MEDIA_TYPE',
  'content type must be application/json',
);
const unsupportedEncoding = refusal(
  'unsupported_media_type',
  'UNSUPPORTED_MEDIA_TYPE',
  'content encoding is not supported',
);
const dropLegacy: DropLegacy = Object.freeze({ verdict: 'drop-legacy' });
export const readBody: ReadBody = Object.freeze({ verdict: 'read-body' });

/**
 * The receiver's decision on a delivery, without I/O and without a web framework (in the manner of
 * octokit/webhooks' verify core): the Express handler is a thin adapter that reads the body between
 * `screen` and `judge`, then dedupes, enqueues or spools. The checks run in the order of
 * docs/receiver.md, "Order of checks"; the first that fails decides. Refusals never echo a header
 * or the body, so neither a signature nor a secret can come back in a response or a log line.
 */
export function createDeliveryDecider(rules: DeliveryRules): DeliveryDecider {
  const allowed = allowedSource(rules);
  return {
    screen(head) {
      // 1. Source address (docs/contract.md, "Source addresses").
      if (!allowed(head.socket, head.headers['x-forwarded-for'])) return forbidden;
      // 2. The legacy duplicate: acknowledged, never queued (docs/contract.md, "Legacy duplicate").
      if (head.headers['x-legacy-signature'] !== undefined) return dropLegacy;
      // 3. JSON only. Node keeps only the first of repeated Content-Type lines; two of them are
      // ambiguous (a proxy may have read the other), so refused. A compressed body is refused too,
      // before it is read: it is not the bytes the signature covers, inflating it would need a
      // limit of its own, and the platform sends none. The size limit is checked while the body
      // is read.
      const contentTypes = headerLines(head.rawHeaders, 'content-type');
      if (contentTypes.length !== 1 || !isJsonContentType(contentTypes[0])) return unsupportedMediaType;
      const encoding = head.headers['content-encoding'];
      if (encoding !== undefined && !isIdentity(encoding)) return unsupportedEncoding;
      // A transfer coding before `chunked` (`gzip, chunked`): Node's parser undoes only the
      // chunking, so the body read would be the compressed bytes, refused likewise.
      const transfer = head.headers['transfer-encoding'];
      if (transfer !== undefined && !isPlainChunked(transfer)) return unsupportedEncoding;
      return readBody;
    },
    // 4. Signature over the exact bytes (docs/contract.md, "Signature", and
    // docs/receiver.md#signature-schemes). 5. Envelope (docs/contract.md, "Envelope").
    judge: createWebhookVerifier(rules),
  };
}

/** `identity` (any case, spaces around): the body as sent, the only encoding taken. */
function isIdentity(encoding: HeaderValue): boolean {
  return typeof encoding === 'string' && encoding.trim().toLowerCase() === 'identity';
}

/** `chunked` alone (any case, spaces around): the only transfer coding that leaves the bytes sent. */
function isPlainChunked(transfer: HeaderValue): boolean {
  return typeof transfer === 'string' && transfer.trim().toLowerCase() === 'chunked';
}

/**
 * The allowlist decision for a request. Without trusted proxies it depends on the connection's
 * address alone, which never changes, so it is taken once per connection: a platform delivering
 * over a kept-alive connection skips parsing and matching the address on every later request.
 */
function allowedSource(
  rules: DeliveryRules,
): (socket: DeliveryHead['socket'], forwardedFor: HeaderValue) => boolean {
  const { allowlist, trustProxy } = rules;
  if (!allowlist) return () => true;
  const decide = (socket: DeliveryHead['socket'], forwardedFor: HeaderValue) => {
    const client = clientAddress(socket.remoteAddress, forwardedFor, trustProxy);
    return client.ok && isAllowed(allowlist, client.address);
  };
  if (trustProxy.kind !== 'none') return decide;
  const bySocket = new WeakMap<DeliveryHead['socket'], boolean>();
  return (socket) => {
    let decision = bySocket.get(socket);
    if (decision === undefined) {
      decision = decide(socket, undefined);
      bySocket.set(socket, decision);
    }
    return decision;
  };
}
