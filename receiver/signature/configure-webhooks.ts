import { ConfigError } from '../../shared/errors/config-error.ts';
import type { PerWebhook } from './parse-per-webhook.ts';
import {
  defaultSignatureHeader,
  parseWebhookSecrets,
  type SignatureScheme,
  type WebhookSecret,
} from './parse-webhook-secrets.ts';

/** The variables that together describe the webhooks, each parsed on its own. */
export interface WebhookVariables {
  readonly WEBHOOK_SECRETS: string;
  readonly WEBHOOK_SIGNATURE_SCHEME?: PerWebhook<SignatureScheme> | undefined;
  readonly WEBHOOK_SIGNATURE_HEADER?: PerWebhook<string> | undefined;
}

/**
 * The configured webhooks: WEBHOOK_SECRETS, each webhook with its scheme and, for the platform's
 * scheme, its header. A scheme must be known before a secret is read (a Standard Webhooks secret is
 * Base64), so this runs after the variables are parsed one by one. Every problem names its
 * variable: a name that WEBHOOK_SECRETS does not have (a typo would otherwise leave that webhook on
 * the default unnoticed), or a header given to a webhook whose scheme fixes its headers (by name,
 * or for every webhook when every one has such a scheme).
 */
export function configureWebhooks(variables: WebhookVariables): WebhookSecret[] {
  const schemes = variables.WEBHOOK_SIGNATURE_SCHEME;
  const headers = variables.WEBHOOK_SIGNATURE_HEADER;
  const schemeOf = (name: string) => schemes?.byName.get(name) ?? schemes?.fallback ?? 'platform';
  let webhooks: WebhookSecret[];
  try {
    webhooks = parseWebhookSecrets(variables.WEBHOOK_SECRETS, {
      schemeOf,
      headerOf: (name) => headers?.byName.get(name) ?? headers?.fallback ?? defaultSignatureHeader,
    });
  } catch (error) {
    throw new ConfigError([{ variable: 'WEBHOOK_SECRETS', message: (error as Error).message }]);
  }
  const names = webhooks.map((webhook) => webhook.name);
  const problems: { variable: string; message: string }[] = [];
  const unknown = (variable: string, byName: ReadonlyMap<string, unknown> | undefined) => {
    for (const name of byName?.keys() ?? []) {
      if (names.includes(name)) continue;
      const hint = names.find((known) => known.toLowerCase() === name.toLowerCase());
      problems.push({
        variable,
        message:
          `"${name}" is not a webhook of WEBHOOK_SECRETS (${names.join(', ')})` +
          (hint === undefined ? '' : `; did you mean "${hint}"?`),
      });
    }
  };
  unknown('WEBHOOK_SIGNATURE_SCHEME', schemes?.byName);
  unknown('WEBHOOK_SIGNATURE_HEADER', headers?.byName);
  for (const name of headers?.byName.keys() ?? []) {
    if (names.includes(name) && schemeOf(name) === 'standard-webhooks') {
      problems.push({
        variable: 'WEBHOOK_SIGNATURE_HEADER',
        message: `webhook "${name}" uses standard-webhooks, whose signature always comes in webhook-signature`,
      });
    }
  }
  // A header for every webhook applies to the platform-scheme ones only; with none, it would change
  // nothing, silently, where the operator meant it to.
  if (
    headers?.fallback !== undefined &&
    webhooks.every((webhook) => webhook.scheme === 'standard-webhooks')
  ) {
    problems.push({
      variable: 'WEBHOOK_SIGNATURE_HEADER',
      message:
        'every webhook uses standard-webhooks, whose signature always comes in webhook-signature; leave it unset',
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return webhooks;
}
