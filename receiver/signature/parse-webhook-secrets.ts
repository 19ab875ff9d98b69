import { createSecretKey, type KeyObject } from 'node:crypto';
import { looksLikeSecret } from '../../shared/config/looks-like-secret.ts';

/**
 * How a webhook signs its deliveries (docs/receiver.md#signature-schemes): `platform`, the
 * platform's Base64 HMAC of the body in one header, or `standard-webhooks`, the Standard Webhooks
 * scheme (https://www.standardwebhooks.com/): `webhook-id`, `webhook-timestamp`, `webhook-signature`.
 */
export type SignatureScheme = 'platform' | 'standard-webhooks';
export const signatureSchemes: readonly SignatureScheme[] = ['platform', 'standard-webhooks'];

/** The header the platform's signature comes in unless WEBHOOK_SIGNATURE_HEADER names another. */
export const defaultSignatureHeader = 'x-service-signature';

interface WebhookKeys {
  readonly name: string;
  /**
   * Held as KeyObjects: an HMAC keyed with a KeyObject costs a third of one keyed with a Buffer
   * (measured: about 17 us against 52 us per 1.5 KB body), which matters when every secret is
   * tried per request.
   */
  readonly keys: readonly KeyObject[];
}

/** A webhook signed the platform's way; its signature comes in `header` (lowercase). */
export interface PlatformWebhook extends WebhookKeys {
  readonly scheme: 'platform';
  readonly header: string;
}

/** A webhook signed the Standard Webhooks way; its keys are the decoded `whsec_` secrets. */
export interface StandardWebhook extends WebhookKeys {
  readonly scheme: 'standard-webhooks';
}

/** The secrets of one configured webhook (several while a secret is rotated) and how it signs. */
export type WebhookSecret = PlatformWebhook | StandardWebhook;

export interface WebhookOptions {
  /** Each webhook's scheme; `platform` for all when not given. */
  schemeOf?: (name: string) => SignatureScheme;
  /** Each platform-scheme webhook's header; `x-service-signature` for all when not given. */
  headerOf?: (name: string) => string;
}

const maxWebhooks = 10;
/**
 * `name=secret`. What follows the `=` must hold more than `=` and spaces: `abc==` is a bare Base64
 * secret with its padding, not webhook `abc` keyed with `=` (which would fail every delivery and
 * show the secret as the webhook's name in the start-up log).
 */
const namedEntry = /^([A-Za-z0-9_.-]{1,64})\s*=(?=.*[^\s=])(.+)$/s;
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/**
 * A name and `=` with nothing after but more `=`: `eu=` is what `eu=${EU_SECRET}` gives with the
 * variable unset. Read as a bare secret, it keyed webhook `default` with the text `eu=`, a key
 * anyone could guess. Refused, whatever its length: `communityevents=` is also valid Base64, so no
 * rule on the text tells a padded secret from a name. A padded bare secret is written
 * `default=<secret>`; only a `whsec_` one (a Standard Webhooks secret, no webhook's name) is
 * taken whole.
 */
const nameAndPadding = /^[A-Za-z0-9_.-]{1,64}\s*=[\s=]*$/;
const isStandardSecret = (entry: string) =>
  entry.startsWith('whsec_') && base64.test(entry.slice('whsec_'.length));
/**
 * A documentation placeholder left in, not a secret: text in `<...>` (the starter kit's
 * `main=<the webhook's secret from the platform's admin panel>` keyed the webhook with those 52
 * bytes, not even warned about as short). A secret with a space is taken: the platform's format is
 * not published, and one that verified deliveries must not stop a receiver at its upgrade.
 */
const looksLikePlaceholder = (secret: string) => /^<.*>$/s.test(secret);

/**
 * Parses WEBHOOK_SECRETS: comma-separated `name=secret` entries or bare secrets (named `default`).
 * Repeating a name adds a secret to that webhook, so old and new secret both verify during a
 * rotation. The platform recommends at most 10 webhooks per network (docs/contract.md#limits).
 * Error messages name the entry by position only, not even by its name: until an entry parses,
 * the text before its `=` may be part of a secret, and a secret must never reach a log or a
 * terminal. A bare secret that itself looks like `word=...` (an `=` followed by more than padding)
 * must be written as `default=word=...`.
 *
 * A platform secret is used as its UTF-8 bytes; a Standard Webhooks secret is Base64 of 24 to 64
 * random bytes, `whsec_` in front (optional, as in the scheme's reference libraries), and the
 * decoded bytes are the key.
 */
export function parseWebhookSecrets(text: string, options: WebhookOptions = {}): WebhookSecret[] {
  const schemeOf = options.schemeOf ?? (() => 'platform');
  const headerOf = options.headerOf ?? (() => defaultSignatureHeader);
  const byName = new Map<string, KeyObject[]>();
  text.split(',').forEach((raw, index) => {
    const entry = raw.trim();
    if (entry === '') throw new Error(`entry ${index + 1} is empty`);
    if (nameAndPadding.test(entry) && !isStandardSecret(entry)) {
      throw new Error(
        `entry ${index + 1} is a name and "=" with no secret after it (a variable left unset?); ` +
          'a bare secret ending in "=" is written default=<secret>',
      );
    }
    const match = namedEntry.exec(entry);
    const name = match?.[1] ?? 'default';
    // The name is logged at start-up: random text before an `=` is a bare secret holding one.
    if (looksLikeSecret(name)) {
      throw new Error(
        `entry ${index + 1} has text before its "=" that looks like a secret, not a webhook name; ` +
          'a bare secret holding "=" is written default=<secret>',
      );
    }
    // Never empty: a bare entry is not (checked above), a named one holds more than `=` and spaces.
    const secret = (match?.[2] ?? entry).trim();
    // A Standard Webhooks secret is Base64, whose check below refuses a placeholder already.
    if (schemeOf(name) === 'platform' && looksLikePlaceholder(secret)) {
      throw new Error(
        `entry ${index + 1} looks like a placeholder, not a secret (text in "<" and ">"): ` +
          "put the webhook's secret from the platform's admin panel in its place",
      );
    }
    const keys = byName.get(name) ?? [];
    let key: Buffer;
    try {
      key = schemeOf(name) === 'standard-webhooks' ? standardSecretKey(secret) : Buffer.from(secret, 'utf8');
    } catch (error) {
      throw new Error(`entry ${index + 1} ${(error as Error).message}`);
    }
    keys.push(createSecretKey(key));
    byName.set(name, keys);
  });
  if (byName.size > maxWebhooks) {
    throw new Error(`${byName.size} webhook names given; at most ${maxWebhooks} are supported`);
  }
  return [...byName].map(([name, keys]): WebhookSecret => {
    const scheme = schemeOf(name);
    return scheme === 'platform' ? { name, keys, scheme, header: headerOf(name) } : { name, keys, scheme };
  });
}

/**
 * The HMAC key of a Standard Webhooks secret: the Base64 after `whsec_` (the prefix is optional, as
 * in the scheme's reference libraries), decoded; the scheme asks for 24 to 64 random bytes. The
 * error says what is wrong without repeating the secret.
 */
export function standardSecretKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const expected = 'a Standard Webhooks secret, whsec_ and Base64 of 24 to 64 bytes';
  if (!base64.test(encoded)) throw new Error(`is not ${expected}`);
  const key = Buffer.from(encoded, 'base64');
  if (key.length < 24 || key.length > 64)
    throw new Error(`decodes to ${key.length} bytes; expected ${expected}`);
  return key;
}
