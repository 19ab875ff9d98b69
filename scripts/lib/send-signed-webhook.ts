import { signBody } from '../../receiver/signature/sign-body.ts';

/**
 * POSTs a webhook body to a receiver as the platform sends it (JSON, signed in
 * `x-service-signature`). The benches and try-stack time what comes back, so the caller reads the
 * answer's body itself.
 */
export function sendSignedWebhook(url: string, body: string, secret: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': signBody(body, secret) },
    body,
  });
}
