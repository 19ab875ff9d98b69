import { deliveryKey } from '../delivery-key.ts';
import { validateEnvelope } from '../envelope/validate-envelope.ts';
import { messageKey } from '../message-key.ts';
import type { PlatformWebhook, StandardWebhook, WebhookSecret } from '../signature/parse-webhook-secrets.ts';
import { verifySignature } from '../signature/verify-signature.ts';
import { verifyStandardSignature, type StandardFailure } from '../signature/verify-standard-signature.ts';
import { refusal, type BodyVerdict, type Refusal } from './delivery-verdict.ts';

export type HeaderValue = string | readonly string[] | undefined;
/** Request headers as Node gives them: lowercase names. */
export type RequestHeaders = Readonly<Record<string, HeaderValue>>;

/** What a delivery's signature and body are checked against. */
export interface VerifierRules {
  /** The configured webhooks (WEBHOOK_SECRETS with their schemes and headers). */
  secrets: readonly WebhookSecret[];
  /** How far a Standard Webhooks timestamp may be from now, either way (default 300 s). */
  timestampToleranceSeconds?: number;
  /** The clock, epoch ms (default Date.now). */
  now?: () => number;
}

/** Checks 4 and 5 on a request whose body has been read: signature, then envelope. */
export type WebhookVerifier = (rawBody: Buffer, headers: RequestHeaders) => BodyVerdict;

export const defaultTimestampToleranceSeconds = 300;
const standardHeaders = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/**
 * The receiver's verification core: plain values in (the raw body, the headers, the configured
 * webhooks), a verdict out, without I/O or a web framework. The receiver's HTTP handler calls it,
 * and so can a team that keeps its own HTTP server (examples/own-server).
 *
 * Each platform-scheme webhook's signature is read from its own header; a request is checked
 * against the webhooks whose signature headers it carries, in the order they were configured
 * (whatever their schemes and headers), and the first whose secret matches is the sender. Its scheme decides the envelope and the dedupe key
 * (docs/receiver.md#signature-schemes). A refusal names the first problem found; a request with no
 * signature header of any configured webhook is refused naming the headers it lacks.
 */
export function createWebhookVerifier(rules: VerifierRules): WebhookVerifier {
  const now = rules.now ?? Date.now;
  const toleranceSeconds = rules.timestampToleranceSeconds ?? defaultTimestampToleranceSeconds;
  const steps = verificationSteps(rules.secrets);
  const refusedStandard = standardRefusals(toleranceSeconds);
  const expected = [
    ...new Set(steps.map((step) => (step.scheme === 'platform' ? step.header : 'webhook-signature'))),
  ];
  const missing = refusal('bad_signature', 'UNAUTHORIZED', `${expected.join(' or ')} is missing`);

  return (rawBody, headers) => {
    let failure: Refusal | undefined;
    for (const step of steps) {
      if (step.scheme === 'platform') {
        const value = headers[step.header];
        if (value === undefined || value === '') continue;
        const signature = verifySignature(rawBody, value, step.webhooks);
        if (signature.ok) return accepted(rawBody, signature.webhook, 'platform', deliveryKey(rawBody));
        failure ??= step.invalid;
        continue;
      }
      if (!standardHeaders.some((name) => headers[name] !== undefined)) continue;
      const clock = { nowSeconds: Math.floor(now() / 1000), toleranceSeconds };
      const signature = verifyStandardSignature(rawBody, headers, step.webhooks, clock);
      if (signature.ok) {
        const key = messageKey(signature.webhook, signature.id);
        return accepted(rawBody, signature.webhook, 'standard-webhooks', key);
      }
      failure ??= refusedStandard[signature.reason];
    }
    return failure ?? missing;
  };
}

/** 5. The envelope of the signer's scheme (docs/contract.md#envelope); refused with 400 otherwise. */
function accepted(
  rawBody: Buffer,
  webhook: string,
  scheme: WebhookSecret['scheme'],
  dedupeKey: string,
): BodyVerdict {
  const envelope = validateEnvelope(rawBody, scheme);
  if (!envelope.ok) return refusal('bad_envelope', 'BAD_REQUEST', envelope.message);
  return { verdict: 'accept', webhook, scheme, envelope: envelope.envelope, dedupeKey };
}

/** Platform-scheme webhooks next to each other in WEBHOOK_SECRETS that share a signature header. */
interface PlatformStep {
  readonly scheme: 'platform';
  readonly header: string;
  readonly webhooks: readonly PlatformWebhook[];
  readonly invalid: Refusal;
}

/** Standard Webhooks webhooks next to each other in WEBHOOK_SECRETS. */
interface StandardStep {
  readonly scheme: 'standard-webhooks';
  readonly webhooks: readonly StandardWebhook[];
}

/**
 * The webhooks in configured order, neighbours checked the same way (same scheme and header) taken
 * together, so each header is read and decoded once per run of them: with every webhook on one
 * header, as most deployments have it, that is one step, as before. A webhook configured before
 * another is always tried first, whatever their schemes and headers, so a delivery validly signed
 * for two is the first one's, as docs/receiver.md says.
 */
function verificationSteps(secrets: readonly WebhookSecret[]): (PlatformStep | StandardStep)[] {
  const steps: { scheme: WebhookSecret['scheme']; header: string; webhooks: WebhookSecret[] }[] = [];
  for (const secret of secrets) {
    const header = secret.scheme === 'platform' ? secret.header : 'webhook-signature';
    const last = steps.at(-1);
    if (last && last.scheme === secret.scheme && last.header === header) last.webhooks.push(secret);
    else steps.push({ scheme: secret.scheme, header, webhooks: [secret] });
  }
  return steps.map((step) =>
    step.scheme === 'platform'
      ? {
          scheme: 'platform',
          header: step.header,
          webhooks: step.webhooks as PlatformWebhook[],
          invalid: refusal('bad_signature', 'UNAUTHORIZED', `${step.header} is not valid`),
        }
      : { scheme: 'standard-webhooks', webhooks: step.webhooks as StandardWebhook[] },
  );
}

function standardRefusals(toleranceSeconds: number): Record<StandardFailure, Refusal> {
  const unauthorized = (message: string) => refusal('bad_signature', 'UNAUTHORIZED', message);
  return {
    'missing-id': unauthorized('webhook-id is missing'),
    'bad-id': unauthorized('webhook-id must be 1 to 256 printable characters without spaces'),
    'missing-timestamp': unauthorized('webhook-timestamp is missing'),
    'bad-timestamp': unauthorized('webhook-timestamp must be a Unix time in seconds'),
    stale: unauthorized(`webhook-timestamp is more than ${toleranceSeconds} s in the past`),
    future: unauthorized(`webhook-timestamp is more than ${toleranceSeconds} s in the future`),
    'missing-signature': unauthorized('webhook-signature is missing'),
    mismatch: unauthorized('webhook-signature is not valid'),
  };
}
