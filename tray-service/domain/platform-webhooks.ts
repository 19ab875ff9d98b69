/**
 * How the receiver verified a delivery (docs/receiver.md#signature-schemes), as its job says. A job
 * queued by a receiver from before the job carried it has none.
 */
export type DeliveryScheme = 'platform' | 'standard-webhooks';

/**
 * Which webhooks' events are the platform's (TRAY_PLATFORM_WEBHOOKS): several webhooks are
 * typically the platform's regions, while another sender's events (a partner's, a billing vendor's)
 * are for the customer's own consumer of the queue and never change the tray.
 */
export interface PlatformWebhooks {
  /** The platform's webhooks by name; absent (the variable unset): those of the platform's scheme. */
  readonly names?: ReadonlySet<string>;
}

/** The scheme unless TRAY_PLATFORM_WEBHOOKS names the webhooks. */
export const PLATFORM_SCHEME_ONLY: PlatformWebhooks = {};

/**
 * Whether a delivery is the platform's, so its event may be mapped and applied to the tray. A
 * Standard Webhooks delivery never is, even from a webhook the setting names: the platform signs
 * with its own scheme and sends `{event, data}`, while such a job's `data` is the sender's whole
 * payload, which read as a platform event could only be a forgery of one. A job without a scheme
 * was queued by an older receiver before an upgrade: by name when the setting names webhooks,
 * otherwise taken as the platform's, as every job was before (docs/decisions.md).
 */
export function isPlatformDelivery(
  delivery: { readonly webhook: string; readonly scheme?: DeliveryScheme | undefined },
  platform: PlatformWebhooks,
): boolean {
  if (delivery.scheme === 'standard-webhooks') return false;
  return platform.names === undefined || platform.names.has(delivery.webhook);
}
