/**
 * PostgreSQL's text and jsonb cannot hold the character U+0000 (a statement carrying one fails),
 * while JSON and MongoDB allow it. What is stored from a delivery has each U+0000 replaced by
 * U+FFFD, the replacement character, so such an event is stored (and seen) instead of failing its
 * job on every retry.
 */
export function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}
