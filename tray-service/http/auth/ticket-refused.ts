/**
 * The cause of a stream ticket's refusal (unknown, expired, spent). Such a request was decided by
 * its ticket alone, whatever Authorization header it also sent: no token was read, so none was
 * guessed (is-token-guess.ts), and a ticket's 256 random bits need no count of failures.
 */
export class TicketRefused extends Error {
  constructor() {
    super('stream ticket refused');
    this.name = 'TicketRefused';
  }
}
