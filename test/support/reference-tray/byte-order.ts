/**
 * Strings in the order of their UTF-8 bytes, as the stores compare ids (not JavaScript's `<`, which
 * compares UTF-16 code units); written here without the domain's helper, so the model checks it.
 */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
