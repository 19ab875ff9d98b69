import { resolve } from 'node:path';
import { z } from 'zod';
import { parseCidrList, type Cidr } from '../shared/address/parse-cidr.ts';
import { firstTooWide, showCidr } from '../shared/address/too-wide.ts';
import { parseTrustProxy } from './address/parse-trust-proxy.ts';
import { parseRegions } from './allowlist/parse-regions.ts';
import { ConfigError } from '../shared/errors/config-error.ts';
import { configureWebhooks } from './signature/configure-webhooks.ts';
import { parsePerWebhook } from './signature/parse-per-webhook.ts';
import type { WebhookSecret } from './signature/parse-webhook-secrets.ts';
import { parseSignatureHeader, parseSignatureScheme } from './signature/parse-signature-options.ts';
import { commonShape, withRedisTarget } from '../shared/config/common-config.ts';
import { checkMetricsPort, opsShape } from '../shared/config/ops-config.ts';
import { onOff, parsedWith, port, positiveInt, wholeNumber } from '../shared/config/env-types.ts';
import { parseEnv, type Env } from '../shared/config/parse-env.ts';
import { receiverListenShape } from '../shared/config/listen-config.ts';

/** Routes the receiver serves on its own port besides the webhook path. */
const OWN_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Whether a webhook path would take over one of the receiver's own routes: the webhook path's
 * route comes first and answers 405 to anything but a POST, so with `/healthz` an orchestrator's
 * probe got 405 and restarted a healthy receiver. Compared as Express matches a route: any case,
 * with or without one trailing slash.
 */
function isOwnRoute(path: string): boolean {
  return OWN_ROUTES.has(path.toLowerCase().replace(/(.)\/$/, '$1'));
}

const keepAliveRange = 'expected a whole number from 1000 to 900000 (milliseconds)';

export const receiverShape = {
  ...commonShape,
  ...opsShape,
  RECEIVER_PORT: port(8080),
  ...receiverListenShape,
  /**
   * How long an idle kept-alive connection stays open. Above the idle timeout of a load balancer in
   * front (AWS ALB: 60 s), so the balancer, not the receiver, closes it: otherwise the receiver may
   * close a connection just as the balancer sends a request on it, and the platform gets a 502.
   */
  RECEIVER_KEEPALIVE_TIMEOUT_MS: wholeNumber(keepAliveRange, 1_000, 900_000).default(5_000),
  WEBHOOK_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9/_.-]*$/, {
      error: 'expected a path starting with "/" (letters, digits, "/", "_", ".", "-")',
    })
    .refine((path) => !isOwnRoute(path), {
      error: (issue) => `"${String(issue.input)}" is the receiver's own route; choose another path`,
    })
    .default('/webhooks'),
  /** Read with the schemes and headers below, once all are parsed (configureWebhooks). */
  WEBHOOK_SECRETS: z.string({
    error:
      'required: comma-separated name=secret entries or a bare secret (the webhook secret from the admin panel)',
  }),
  WEBHOOK_SIGNATURE_SCHEME: parsedWith((text) => parsePerWebhook(text, parseSignatureScheme)).optional(),
  WEBHOOK_SIGNATURE_HEADER: parsedWith((text) => parsePerWebhook(text, parseSignatureHeader)).optional(),
  /**
   * Standard Webhooks' default; at most an hour, so a captured delivery cannot be replayed for long.
   * One value for every webhook; WEBHOOK_DEDUPE_SECONDS must cover it twice (loadReceiverConfig).
   */
  WEBHOOK_TOLERANCE_SECONDS: positiveInt(300, 3_600),
  WEBHOOK_ALLOWLIST: onOff('on'),
  WEBHOOK_REGIONS: parsedWith(parseRegions).default(['sg', 'eu', 'us']),
  WEBHOOK_ALLOW_CIDRS: parsedWith(parseAllowCidrs).default([]),
  TRUST_PROXY: parsedWith(parseTrustProxy).default({ kind: 'none' }),
  WEBHOOK_MAX_BODY_BYTES: positiveInt(1024 * 1024, 64 * 1024 * 1024),
  WEBHOOK_DEDUPE_SECONDS: positiveInt(86_400, 30 * 86_400),
  /** At most 1 s, so an answer (after a spool write) stays well inside the platform's 1.5 s. */
  WEBHOOK_ENQUEUE_TIMEOUT_MS: positiveInt(300, 1_000),
  /**
   * Resolved once, from the working directory at start-up, so the start-up line names the folder
   * itself: a deployment starting each release in a folder of its own leaves the old one's spooled
   * events behind, where an operator must be able to find them.
   */
  SPOOL_DIR: z
    .string()
    .default('.data/receiver-spool')
    .transform((dir) => resolve(dir)),
};

export type ReceiverConfig = ReturnType<typeof loadReceiverConfig>;

export function loadReceiverConfig(env: Env) {
  const parsed = parseEnv(receiverShape, env);
  checkMetricsPort(parsed.METRICS_PORT, { RECEIVER_PORT: parsed.RECEIVER_PORT });
  // The secrets as configured webhooks; their text is not kept.
  const webhooks = configureWebhooks(parsed);
  refuseReplayableWindow(webhooks, parsed.WEBHOOK_DEDUPE_SECONDS, parsed.WEBHOOK_TOLERANCE_SECONDS);
  return withRedisTarget({ ...parsed, WEBHOOK_SECRETS: webhooks });
}

/**
 * Within the tolerance only the dedupe mark of a Standard Webhooks delivery's webhook-id stops a
 * replay of it (docs/receiver.md#signature-schemes), so the mark must outlast the time the
 * delivery's signature is accepted. That is the tolerance either side of its timestamp: a sender
 * whose clock runs ahead has its first delivery accepted up to the tolerance before the timestamp,
 * and a copy of it is then accepted for up to twice the tolerance after that first one, and a second
 * more: the age is counted in whole seconds (the timestamp's unit) and both edges are accepted.
 */
function refuseReplayableWindow(
  webhooks: readonly WebhookSecret[],
  dedupeSeconds: number,
  toleranceSeconds: number,
): void {
  if (!webhooks.some((webhook) => webhook.scheme === 'standard-webhooks')) return;
  const needed = 2 * toleranceSeconds + 1;
  if (dedupeSeconds >= needed) return;
  throw new ConfigError([
    {
      variable: 'WEBHOOK_DEDUPE_SECONDS',
      message:
        `${dedupeSeconds} is shorter than twice WEBHOOK_TOLERANCE_SECONDS (${toleranceSeconds}) and a ` +
        `second: a Standard Webhooks delivery could be replayed after its webhook-id is forgotten; ` +
        `set at least ${needed}, or lower WEBHOOK_TOLERANCE_SECONDS`,
    },
  ]);
}

/**
 * WEBHOOK_ALLOW_CIDRS: extra sender ranges. A /0 (also `::ffff:0.0.0.0/96`, read as IPv4's), or
 * ranges wider than one network's (0.0.0.0/1 and 128.0.0.0/1 are every address too), would allow
 * much or all of the internet while the configuration still reads as an allowlist; turning the
 * check off is `WEBHOOK_ALLOWLIST=off`, which says so and warns at start.
 */
function parseAllowCidrs(text: string): Cidr[] {
  const cidrs = parseCidrList(text);
  const wide = firstTooWide(cidrs, 'allows');
  if (wide)
    throw new Error(
      `"${showCidr(wide.cidr)}" ${wide.reason}; to accept any sender, set WEBHOOK_ALLOWLIST=off instead`,
    );
  return cidrs;
}
