import { ConfigError } from '../errors/config-error.ts';

/**
 * The tray's secrets, each held by a different party: a value given for two of them hands whoever
 * holds the one what the other allows (the party verifying moderation decisions, holding
 * JWT_SECRET, could mint any user's token; a scraper's config holding ADMIN_TOKEN could erase a
 * user's data). In the order they are named: the later of two equal ones is the one refused.
 */
const SECRETS = [
  ['JWT_SECRET', 'signs user tokens'],
  ['ADMIN_JWT_SECRET', 'signs admin tokens'],
  ['ADMIN_TOKEN', 'opens the admin API'],
  ['MODERATION_WEBHOOK_SECRET', 'signs moderation decisions for their receiver'],
  ['METRICS_TOKEN', 'opens /metrics to a scraper'],
] as const;

type Secrets = Partial<Record<(typeof SECRETS)[number][0], string | undefined>>;

/** Refuses (ConfigError naming the variable) a secret whose value another one above already has. */
export function checkSecretsApart(config: Secrets): void {
  const seen = new Map<string, (typeof SECRETS)[number]>();
  for (const secret of SECRETS) {
    const value = config[secret[0]];
    if (value === undefined) continue;
    const earlier = seen.get(value);
    if (earlier) {
      throw new ConfigError([
        {
          variable: secret[0],
          message: `must differ from ${earlier[0]}: it ${secret[1]}, ${earlier[0]} ${earlier[1]}, and whoever holds the one must not hold the other`,
        },
      ]);
    }
    seen.set(value, secret);
  }
}
