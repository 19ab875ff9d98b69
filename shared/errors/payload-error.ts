/** A payload that passed its schema but contradicts itself; the event is stored as `invalid`. */
export class PayloadError extends Error {
  override readonly name = 'PayloadError';
  readonly code = 'PAYLOAD_INVALID';
}
