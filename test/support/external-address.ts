import { networkInterfaces } from 'node:os';

/** An IPv4 address of this machine other than loopback, if it has one (to prove a port is not open there). */
export function externalAddress(): string | undefined {
  for (const entries of Object.values(networkInterfaces())) {
    const entry = entries?.find((candidate) => candidate.family === 'IPv4' && !candidate.internal);
    if (entry) return entry.address;
  }
  return undefined;
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
