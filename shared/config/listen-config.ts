import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { z } from 'zod';

/** Where a listener binds when nothing is configured: this machine only. */
export const LOOPBACK = '127.0.0.1';

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * Numbers the system's resolver reads as an IPv4 address in a short form (inet_aton): `0` and
 * `0x0` are 0.0.0.0, every interface, `127.1` is 127.0.0.1. No host name ends in a label of digits.
 */
const NUMERIC_SHORT_FORM = /^(?:0x[0-9a-f]*|\d+)(?:\.(?:0x[0-9a-f]*|\d+)){0,3}$/i;

/** An address to listen on: an IPv4 or IPv6 literal, or a host name of this machine. */
export const listenHost = z
  .string()
  .refine((value) => isIP(value) !== 0 || HOSTNAME.test(value), {
    error:
      'expected an address to listen on: 127.0.0.1 (this machine only), 0.0.0.0 or :: (every interface), or one interface address',
  })
  // HOST=0 meant "off" to whoever wrote it (TRUST_PROXY=0 does), and listened on every interface.
  .refine((value) => isIP(value) !== 0 || !NUMERIC_SHORT_FORM.test(value), {
    error: (issue) =>
      `expected an address written in full: "${String(issue.input)}" is a short form the system reads as an IPv4 address (0 is 0.0.0.0, every interface); write 127.0.0.1, 0.0.0.0 or the interface address`,
  });

/**
 * Both services listen on loopback unless told otherwise, so a service started on a machine with a
 * public interface is not reachable from outside until an operator decides it should be
 * (docs/operations.md#before-exposing-a-port). HOST sets both; a per-service variable wins.
 */
/**
 * Whether `value` is this machine's name (`machine`), as a shell sets HOST: not `localhost`, which a
 * minimal container may be named and is loopback all the same.
 */
export function namesThisMachine(value: string, machine = hostname()): boolean {
  const name = value.toLowerCase();
  return name !== 'localhost' && name === machine.toLowerCase();
}

/**
 * HOST is also a shell's: tcsh puts HOST=<this machine's name> in every command's environment, and
 * the services listened on the interface the name resolves to (often a public one) with nobody
 * having chosen it. This machine's name is taken in a service's own variable only.
 */
const sharedListenHost = listenHost.refine((value) => !namesThisMachine(value), {
  error: (issue) =>
    `this machine's name ("${String(issue.input)}"), which some shells (tcsh) set in every command's environment; give an address (127.0.0.1, 0.0.0.0, :: or an interface's), or the name in RECEIVER_HOST or TRAY_HOST`,
});
export const receiverListenShape = {
  HOST: sharedListenHost.optional(),
  RECEIVER_HOST: listenHost.optional(),
};
export const trayListenShape = { HOST: sharedListenHost.optional(), TRAY_HOST: listenHost.optional() };

/** The address one service binds: its own variable, else HOST, else loopback. */
export function listenHostOf(config: { HOST?: string | undefined }, own: string | undefined): string {
  return own ?? config.HOST ?? LOOPBACK;
}

/**
 * The variable that chose the address one service binds (its own, else HOST), or undefined for the
 * loopback default: named when the address cannot be bound.
 */
export function listenHostVariable(
  config: { HOST?: string | undefined },
  ownName: string,
  own: string | undefined,
): string | undefined {
  if (own !== undefined) return ownName;
  return config.HOST === undefined ? undefined : 'HOST';
}
