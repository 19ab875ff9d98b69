import { looksLikeSecret } from '../../shared/config/looks-like-secret.ts';
import { signatureSchemes, type SignatureScheme } from './parse-webhook-secrets.ts';

/** A value of WEBHOOK_SIGNATURE_SCHEME: `platform` or `standard-webhooks`. */
export function parseSignatureScheme(value: string): SignatureScheme {
  const scheme = signatureSchemes.find((known) => known === value.toLowerCase());
  if (scheme !== undefined) return scheme;
  const near = signatureSchemes.find((known) => value !== '' && known.includes(value.toLowerCase()));
  const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
  // The value is not repeated: WEBHOOK_SECRETS pasted here by mistake would put a secret in the log.
  throw new Error(`not a scheme; expected ${signatureSchemes.join(' or ')}${hint}`);
}

/** An HTTP header name (RFC 9110 token), compared in lowercase as Node gives header names. */
const token = /^[!#$%&'*+.^_`|~0-9a-z-]{1,100}$/;

/** Headers that already mean something to the receiver, so they cannot carry a platform signature. */
const reserved: Readonly<Record<string, string>> = {
  'x-legacy-signature': 'it marks the legacy duplicate, which is acknowledged without a check',
  'webhook-id': 'it is part of the Standard Webhooks scheme',
  'webhook-timestamp': 'it is part of the Standard Webhooks scheme',
  'webhook-signature': 'it is part of the Standard Webhooks scheme (WEBHOOK_SIGNATURE_SCHEME)',
};

/** A value of WEBHOOK_SIGNATURE_HEADER: the header a platform-scheme signature comes in. */
export function parseSignatureHeader(value: string): string {
  const name = value.toLowerCase();
  // Not repeated, as above: the value may be a secret pasted into the wrong variable. Judged as
  // written: lower-cased, a mixed-case secret no longer looked like one.
  if (looksLikeSecret(value)) {
    // It would be logged at start-up as the header's name.
    throw new Error('looks like a secret, not an HTTP header name (was a secret pasted here?)');
  }
  if (!token.test(name)) {
    throw new Error("not an HTTP header name (letters, digits and !#$%&'*+.^_`|~-, at most 100)");
  }
  const why = reserved[name];
  if (why !== undefined) throw new Error(`"${name}" cannot carry the signature: ${why}`);
  return name;
}
