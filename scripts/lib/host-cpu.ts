// What the whole machine's CPUs did during a bench run, from the kernel's counters (Linux), so a run
// slowed by the host (a hypervisor taking time: steal; other work on the machine) can be told apart
// from a slower server under test (BENCHMARKS.md, "Receiver").
import { readFileSync } from 'node:fs';

/** Linux reports /proc/stat in clock ticks of 10 ms (USER_HZ = 100 on every mainstream build). */
const tickSeconds = 0.01;

/** The machine's CPU time so far, summed over all cores, in seconds. */
export interface HostCpu {
  /** Every state but idle, iowait and steal: time some process or the kernel ran. */
  busy: number;
  /** Time the hypervisor ran something else while this machine had work to do. */
  steal: number;
  /** Everything, idle included: cores x elapsed time. */
  total: number;
}

/**
 * Reads the `cpu` line of /proc/stat: user nice system idle iowait irq softirq steal (guest time is
 * already counted in user, so it is not added again).
 */
export function parseHostCpu(procStat: string): HostCpu {
  const line = procStat.split('\n').find((text) => text.startsWith('cpu '));
  if (!line) throw new Error('no cpu line in /proc/stat');
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq;
  return {
    busy: busy * tickSeconds,
    steal: steal * tickSeconds,
    total: (busy + idle + iowait + steal) * tickSeconds,
  };
}

export function hostCpu(): HostCpu {
  return parseHostCpu(readFileSync('/proc/stat', 'utf8'));
}

export interface HostShares {
  /** Shares of the machine (all cores) between two readings. */
  busy: number;
  steal: number;
  busySeconds: number;
  /** Cores x elapsed time: the machine's whole capacity between the readings. */
  totalSeconds: number;
}

export function hostShares(before: HostCpu, after: HostCpu): HostShares {
  const totalSeconds = Math.max(after.total - before.total, Number.EPSILON);
  const busySeconds = after.busy - before.busy;
  return {
    busy: busySeconds / totalSeconds,
    steal: (after.steal - before.steal) / totalSeconds,
    busySeconds,
    totalSeconds,
  };
}
