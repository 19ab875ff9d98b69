import type { ErrorKind } from '../../shared/errors/app-error.ts';
import type { Envelope } from '../envelope/validate-envelope.ts';
import type { SignatureScheme } from '../signature/parse-webhook-secrets.ts';
import type { RejectReason } from '../receiver-metrics.ts';

/** A refusal: the metric's reason, and the error kind (status, code) and message the client gets. */
export interface Refusal {
  readonly verdict: 'refuse';
  readonly reason: RejectReason;
  readonly kind: ErrorKind;
  readonly message: string;
}
export interface DropLegacy {
  readonly verdict: 'drop-legacy';
}
export interface ReadBody {
  readonly verdict: 'read-body';
}
export interface Accept {
  readonly verdict: 'accept';
  /** The webhook whose secret signed the body. */
  readonly webhook: string;
  /** How it signed: the job says so, and the tray applies the platform's scheme only. */
  readonly scheme: SignatureScheme;
  readonly envelope: Envelope;
  /**
   * The delivery's identity for dedupe, also its job id (docs/receiver.md#queue): from the body's
   * bytes for the platform's scheme, from `webhook-id` for Standard Webhooks.
   */
  readonly dedupeKey: string;
}

/** Before the body: refuse, acknowledge the legacy duplicate without reading on, or read the body. */
export type HeadVerdict = Refusal | DropLegacy | ReadBody;
/** After the body: refuse, or accept the event for dedupe and enqueue. */
export type BodyVerdict = Refusal | Accept;

/** A refusal carrying nothing of its request: built once, so the hot path allocates none. */
export const refusal = (reason: RejectReason, kind: ErrorKind, message: string): Refusal =>
  Object.freeze({ verdict: 'refuse', reason, kind, message });
