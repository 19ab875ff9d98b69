import { networkInterfaces } from 'node:os';

/**
 * An IPv4 address of this machine other than 127.0.0.1, to prove a port is not open there: one of
 * its interfaces', or else 127.0.0.2. Linux routes all of 127.0.0.0/8 to the loopback interface, so
 * a server bound to 127.0.0.1 refuses 127.0.0.2 and one bound to 0.0.0.0 accepts it: the checks
 * still run on a machine (a container) whose only interface is loopback, instead of being skipped.
 */
export function externalAddress(): string {
  for (const entries of Object.values(networkInterfaces())) {
    const entry = entries?.find((candidate) => candidate.family === 'IPv4' && !candidate.internal);
    if (entry) return entry.address;
  }
  return '127.0.0.2';
}

/** Whether a TCP connection to host:port is accepted. */
export async function accepts(host: string, port: number): Promise<boolean> {
  try {
    await fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}
