import { isLoopbackHost } from '../../shared/config/loopback-host.ts';
import { hostPort } from '../../shared/http/host-port.ts';

/** `A`, `A, and B`, `A, B, and C`. */
const list = (parts: readonly string[]) =>
  parts.length < 2 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')}, and ${parts.at(-1)}`;

/**
 * What the development stack would open to other machines with these settings (the services'
 * environment, the stack's defaults included): nothing while every listener is on loopback. The
 * stack refuses to start so unless STACK_EXPOSE=on, and then warns: its defaults are for one
 * developer's machine (the receiver's address allowlist off, the demo page on, plain http).
 * `variables`: the names of the settings that open it.
 */
export function stackExposure(env: NodeJS.ProcessEnv): { variables: string[]; open: string } | undefined {
  const exposed = (host: string | undefined): host is string => Boolean(host) && !isLoopbackHost(host ?? '');
  const parts: string[] = [];
  const receiverHost = env.RECEIVER_HOST || env.HOST;
  if (exposed(receiverHost)) {
    const any = env.WEBHOOK_ALLOWLIST === 'off';
    parts.push(
      `the receiver at ${hostPort(receiverHost, env.RECEIVER_PORT ?? '')}${any ? ', which takes webhooks from any address (WEBHOOK_ALLOWLIST=off)' : ''}`,
    );
  }
  const trayHost = env.TRAY_HOST || env.HOST;
  if (exposed(trayHost)) {
    const demo = env.TRAY_DEMO === 'on';
    parts.push(
      `the tray API at ${hostPort(trayHost, env.TRAY_PORT ?? '')}${demo ? ' with its demo page (TRAY_DEMO=on)' : ''}`,
    );
  }
  if (exposed(env.ADMIN_HOST))
    parts.push(`the admin API and dashboard at ${hostPort(env.ADMIN_HOST, env.ADMIN_PORT ?? '')}`);
  if (parts.length === 0) return undefined;
  const variables = (['HOST', 'RECEIVER_HOST', 'TRAY_HOST', 'ADMIN_HOST'] as const).filter((name) =>
    exposed(env[name]),
  );
  return { variables, open: `over plain http: ${list(parts)}` };
}
