import type { RequestHandler } from 'express';
import { isLoopbackHost } from '../../shared/config/loopback-host.ts';
import { AppError } from '../../shared/errors/app-error.ts';

/** The host name of a Host header (`name:port`, `[v6]:port`), without its port. */
function hostName(host: string): string {
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : (host.split(':')[0] ?? '');
}

/**
 * For an admin listener on loopback with no proxy in front (ADMIN_BEHIND_TLS off, ADMIN_TRUST_PROXY
 * unset): refuses a request whose Host names anything but a loopback host (localhost, 127.0.0.0/8,
 * [::1]), before anything else is done for it. A page of any site whose name it then points at 127.0.0.1 (DNS rebinding) has the browser
 * of an operator on this machine, or at the end of an SSH tunnel, call the listener as that site,
 * same-origin to the browser: its wrong sign-ins counted against 127.0.0.1 would refuse every
 * operator reaching the admin from there. Operators name it as localhost or 127.0.0.1.
 */
export function loopbackNamesOnly(): RequestHandler {
  return (req, _res, next) => {
    const host = req.headers.host ?? '';
    if (isLoopbackHost(hostName(host))) return next();
    next(
      new AppError(
        'FORBIDDEN',
        'this admin listener answers requests to localhost, 127.0.0.1 or [::1] only (ADMIN_HOST is loopback); behind a proxy set ADMIN_TRUST_PROXY',
      ),
    );
  };
}
