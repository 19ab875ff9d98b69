/**
 * A setting given per webhook: `value` for every webhook not named, `name=value` for one. The
 * names are those of WEBHOOK_SECRETS (configure-webhooks.ts checks them against it).
 */
export interface PerWebhook<T> {
  readonly fallback: T | undefined;
  readonly byName: ReadonlyMap<string, T>;
}

const namedEntry = /^([A-Za-z0-9_.-]{1,64})\s*=(.*)$/s;

/**
 * Parses a per-webhook variable (WEBHOOK_SIGNATURE_SCHEME, WEBHOOK_SIGNATURE_HEADER): comma-separated
 * entries, each `name=value` or a bare value (at most one); `parseValue` checks each value and
 * throws a message saying what is expected.
 */
export function parsePerWebhook<T>(text: string, parseValue: (value: string) => T): PerWebhook<T> {
  let fallback: T | undefined;
  const byName = new Map<string, T>();
  text.split(',').forEach((raw, index) => {
    const entry = raw.trim();
    if (entry === '') throw new Error(`entry ${index + 1} is empty`);
    const match = namedEntry.exec(entry);
    const value = (match?.[2] ?? entry).trim();
    // Base64 ends in "=" or "==": a secret pasted into the wrong variable reads as a name with
    // nothing (or "=") after it, and that name is most of the secret. Named by place only then.
    const padding = /^=*$/.test(value);
    const where =
      match?.[1] === undefined || padding ? `entry ${index + 1}` : `entry ${index + 1} (${match[1]})`;
    let parsed: T;
    try {
      parsed = parseValue(value);
    } catch (error) {
      throw new Error(`${where}: ${(error as Error).message}`);
    }
    if (match?.[1] === undefined) {
      if (fallback !== undefined) throw new Error(`${where}: only one entry may leave out the webhook name`);
      fallback = parsed;
    } else {
      if (byName.has(match[1])) throw new Error(`${where}: webhook "${match[1]}" is named twice`);
      byName.set(match[1], parsed);
    }
  });
  return { fallback, byName };
}
