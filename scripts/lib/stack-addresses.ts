import { hostPort } from '../../shared/http/host-port.ts';
import { shellsHost } from './operator-environment.ts';

/** Where a service listening on `host` is reached from this machine: every interface on loopback. */
export function reachableHost(host: string | undefined): string {
  return !host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}

/** The addresses of `npm start`'s services as URLs. */
export interface StackAddresses {
  /** The receiver's origin (its /healthz). */
  readonly receiver: string;
  /** Where webhooks go: the receiver's WEBHOOK_PATH. */
  readonly webhooks: string;
  readonly tray: string;
  /** The admin listener's origin. */
  readonly admin: string;
}

/**
 * Where `npm start`'s services are, from the variables the stack reads itself (RECEIVER_PORT,
 * TRAY_PORT, ADMIN_PORT, HOST and the per-service hosts) with its defaults, so a tool run in the
 * same shell as the stack finds it without being told. Empty values count as unset.
 */
export function stackAddresses(env: NodeJS.ProcessEnv = process.env): StackAddresses {
  const at = (host: string | undefined, port: string) => `http://${hostPort(reachableHost(host), port)}`;
  // npm start leaves out a HOST that is this machine's name (tcsh's): its services are on loopback.
  const host = shellsHost(env) ? undefined : env.HOST;
  const receiver = at(env.RECEIVER_HOST || host, env.RECEIVER_PORT || '8080');
  return {
    receiver,
    webhooks: `${receiver}${env.WEBHOOK_PATH || '/webhooks'}`,
    tray: at(env.TRAY_HOST || host, env.TRAY_PORT || '8081'),
    admin: at(env.ADMIN_HOST, env.ADMIN_PORT || '8082'),
  };
}
