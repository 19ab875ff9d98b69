import type { DevSecrets } from './dev-secrets.ts';

/** The tray API's token keys: exactly one may be set (shared/config/tray-api-config.ts). */
const TOKEN_KEYS = ['JWT_SECRET', 'JWT_PUBLIC_KEY', 'JWT_JWKS_URL'] as const;

/**
 * The development settings `npm start` gives its services where the operator set nothing. The
 * stack's token secret only when no token key is set: beside the operator's own key it would make
 * two, which the tray refuses.
 */
export function stackDefaults(
  secrets: Pick<DevSecrets, 'JWT_SECRET' | 'WEBHOOK_SECRET' | 'ADMIN_TOKEN'>,
  spoolDir: string,
  operatorEnv: NodeJS.ProcessEnv,
): Record<string, string> {
  const ownTokenKey = TOKEN_KEYS.some((name) => operatorEnv[name] !== undefined);
  return {
    LOG_LEVEL: 'info',
    // Tray API tokens: `npm run mint-token -- --user <id>` signs with the same secret.
    ...(ownTokenKey ? {} : { JWT_SECRET: secrets.JWT_SECRET }),
    // Receiver (docs/receiver.md): accept webhooks from any address (everything listens on loopback
    // unless STACK_EXPOSE=on), signed with this stack's secret of webhook `dev`, spooled under the
    // data directory.
    WEBHOOK_ALLOWLIST: 'off',
    WEBHOOK_SECRETS: `dev=${secrets.WEBHOOK_SECRET}`,
    SPOOL_DIR: spoolDir,
    // The admin API and queue dashboard on their own loopback port.
    ADMIN_TOKEN: secrets.ADMIN_TOKEN,
    // The live tray demo page at /demo (docs/live-tray.md); off by default everywhere else.
    TRAY_DEMO: 'on',
  };
}

/**
 * Whether the stack starts a Redis of its own: not when the operator names theirs, a server
 * (REDIS_URL) or a cluster (REDIS_CLUSTER_NODES, where REDIS_URL gives only the nodes' password:
 * the stack's would be sent to them).
 */
export function ownRedisWanted(operatorEnv: NodeJS.ProcessEnv): boolean {
  return operatorEnv.REDIS_URL === undefined && operatorEnv.REDIS_CLUSTER_NODES === undefined;
}

/**
 * Each service's environment. Both would listen on METRICS_PORT, and the second to start would
 * exit: the receiver takes it, the tray service the next port.
 */
export function serviceEnvironments(env: NodeJS.ProcessEnv): {
  receiver: NodeJS.ProcessEnv;
  tray: NodeJS.ProcessEnv;
} {
  const port = Number(env.METRICS_PORT);
  // One that is no port is the receiver's to refuse, naming the variable.
  if (env.METRICS_PORT === undefined || !Number.isInteger(port)) return { receiver: env, tray: env };
  return { receiver: env, tray: { ...env, METRICS_PORT: String(port + 1) } };
}

/**
 * Why the metrics ports serviceEnvironments gives cannot be used, naming METRICS_PORT: the next
 * port is no port, or either is another listener's of the stack. undefined when they can (or when
 * METRICS_PORT is unset, or no number: the receiver refuses that, naming it).
 */
export function metricsPortsProblem(
  env: NodeJS.ProcessEnv,
  listeners: Readonly<Record<string, string>>,
): string | undefined {
  const port = Number(env.METRICS_PORT);
  if (env.METRICS_PORT === undefined || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  if (port + 1 > 65535)
    return `METRICS_PORT: ${port} leaves no next port for the tray service's metrics; set a lower one`;
  for (const [variable, value] of Object.entries(listeners))
    if (Number(value) === port || Number(value) === port + 1)
      return `METRICS_PORT: ${port} and the next port (the tray service's metrics) must differ from ${variable} (${value})`;
  return undefined;
}
