// The tables and summary `npm run bench:receiver` prints (scripts/bench-receiver.ts).
import { median } from './quantile.ts';
import type { CommandStats } from './redis-command-stats.ts';

/** Where the machine's CPU went during one run, as shares of all its cores. */
export interface MachineShares {
  busy: number;
  steal: number;
  server: number;
  redis: number;
  generator: number;
  /** Busy time no process of this run accounts for: other work on the machine, the kernel's own. */
  others: number;
}

/** One measured run of one server. */
export interface Figures {
  round: number;
  /**
   * bare, receiver, baseline (another checkout's receiver, BENCH_BASELINE) or checks (the receiver
   * without its store, BENCH_SPLIT=1).
   */
  mode: string;
  /** Requests answered 2xx a second. */
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
  /** CPU time per request of the server process, of redis-server and of the load generator. */
  serverCpuMicros: number;
  redisCpuMicros: number;
  generatorCpuMicros: number;
  /** Share of the run the server's event loop was busy: near 1, the server set the pace. */
  serverBusy: number;
  /** The same for the load generator: near 1, it did. */
  generatorBusy: number;
  /** Jobs waiting in the receiver's queue when the run started (nothing consumes them here). */
  queued: number;
  machine: MachineShares;
  /** What Redis's commands cost during the run (INFO commandstats). */
  commands: CommandStats;
}

/** The commands of the receiver's enqueue script, in the order it calls them. */
const scriptCommands = ['set', 'exists', 'incr', 'hset', 'lpush', 'publish'] as const;

const percent = (ratio: number) => `${(ratio * 100).toFixed(0)}%`;
const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
const table = (head: readonly string[], rows: readonly (readonly (string | number)[])[]) =>
  [line(head), line(head.map((_, i) => (i === 1 ? '---' : '---:'))), ...rows.map(line)].join('\n');
const perCall = (stats: CommandStats, name: string) => {
  const command = stats.get(name);
  return command ? (command.usec / command.calls).toFixed(1) : '-';
};

/** Jobs queued (one HSET each: the job's hash), script calls, and the scripts' own time per job. */
function scriptFigures(r: Figures) {
  const calls = (r.commands.get('evalsha')?.calls ?? 0) + (r.commands.get('eval')?.calls ?? 0);
  const usec = (r.commands.get('evalsha')?.usec ?? 0) + (r.commands.get('eval')?.usec ?? 0);
  const jobs = r.commands.get('hset')?.calls ?? 0;
  return { calls, jobs, usecPerJob: usec / Math.max(jobs, 1) };
}

export function receiverBenchReport(results: readonly Figures[]): string {
  const speed = table(
    [
      'round',
      'server',
      'req/s',
      'p50 ms',
      'p99 ms',
      'requests',
      'failed',
      'server CPU us/req',
      'redis CPU us/req',
      'generator CPU us/req',
      'queued at start',
    ],
    results.map((r) => [
      r.round,
      r.mode,
      Math.round(r.requestsPerSecond),
      r.p50,
      r.p99,
      r.total,
      r.non2xx + r.errors,
      Math.round(r.serverCpuMicros),
      Math.round(r.redisCpuMicros),
      Math.round(r.generatorCpuMicros),
      r.queued,
    ]),
  );
  const machine = table(
    [
      'round',
      'server',
      'machine busy',
      'steal',
      'server',
      'redis',
      'generator',
      'others',
      'server loop busy',
      'generator loop busy',
    ],
    results.map((r) => [
      r.round,
      r.mode,
      percent(r.machine.busy),
      percent(r.machine.steal),
      percent(r.machine.server),
      percent(r.machine.redis),
      percent(r.machine.generator),
      percent(r.machine.others),
      percent(r.serverBusy),
      percent(r.generatorBusy),
    ]),
  );
  const enqueueing = results.filter((r) => scriptFigures(r).jobs > 0);
  const redis = table(
    [
      'round',
      'server',
      'jobs per script call',
      'script us/job',
      'rest of redis us/job',
      ...scriptCommands.map((name) => `${name.toUpperCase()} us`),
    ],
    enqueueing.map((r) => {
      const script = scriptFigures(r);
      const redisPerJob = (r.redisCpuMicros * r.total) / Math.max(script.jobs, 1);
      return [
        r.round,
        r.mode,
        (script.jobs / Math.max(script.calls, 1)).toFixed(1),
        script.usecPerJob.toFixed(1),
        Math.max(0, redisPerJob - script.usecPerJob).toFixed(1),
        ...scriptCommands.map((name) => perCall(r.commands, name)),
      ];
    }),
  );
  return [
    '',
    speed,
    '',
    'The machine during each run (shares of all its cores; others: busy time no process of the bench accounts for):',
    '',
    machine,
    '',
    "Redis per queued job (INFO commandstats; the script's time includes its commands'; the rest is I/O and parsing):",
    '',
    redis,
    '',
    summary(results),
  ].join('\n');
}

/** The servers compared with the bare app, in the summary's order, with the targets each is held to. */
const targets: Record<string, { throughput: string; p99: string }> = {
  receiver: { throughput: 'target >= 60%', p99: 'target < 50 ms' },
  baseline: { throughput: 'target >= 60%', p99: 'target < 50 ms' },
  checks: { throughput: 'no store, no target', p99: 'no target' },
};

function summary(results: readonly Figures[]): string {
  const rounds = [...new Set(results.map((r) => r.round))];
  const cpu = (r: Figures) => r.serverCpuMicros + r.redisCpuMicros;
  const lines: string[] = [];
  const list = (values: number[], format: (value: number) => string) => values.map(format).join(', ');
  for (const [mode, target] of Object.entries(targets)) {
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const p99: number[] = [];
    for (const round of rounds) {
      const bare = results.find((r) => r.round === round && r.mode === 'bare');
      const server = results.find((r) => r.round === round && r.mode === mode);
      if (!bare || !server) continue;
      ratios.push(server.requestsPerSecond / bare.requestsPerSecond);
      cpuRatios.push(cpu(server) / cpu(bare));
      p99.push(server.p99);
    }
    if (ratios.length === 0) continue;
    lines.push(
      `${mode}/bare throughput: median ${(median(ratios) * 100).toFixed(1)}% (${target.throughput}; rounds ${list(ratios, (r) => `${(r * 100).toFixed(1)}%`)})`,
      `${mode} p99: median ${median(p99)} ms (${target.p99}; rounds ${list(p99, (p) => `${p} ms`)})`,
      `CPU per request (server + redis-server), ${mode}/bare: median ${median(cpuRatios).toFixed(2)}x (rounds ${list(cpuRatios, (r) => `${r.toFixed(2)}x`)})`,
    );
  }
  const sideBySide = rounds.flatMap((round) => {
    const receiver = results.find((r) => r.round === round && r.mode === 'receiver');
    const base = results.find((r) => r.round === round && r.mode === 'baseline');
    return receiver && base ? [cpu(receiver) / cpu(base)] : [];
  });
  if (sideBySide.length > 0) {
    lines.push(
      `CPU per request (server + redis-server), receiver/baseline: median ${median(sideBySide).toFixed(3)} (rounds ${list(sideBySide, (r) => r.toFixed(3))})`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The runs that had requests not answered 2xx (refused, failed, timed out), one line each: their
 * figures measured something else than the acknowledged path, so the run fails.
 */
export function benchFailures(
  results: readonly Pick<Figures, 'round' | 'mode' | 'non2xx' | 'errors' | 'total'>[],
): string[] {
  return results
    .filter((r) => r.non2xx + r.errors > 0)
    .map(
      (r) =>
        `round ${r.round}, ${r.mode}: ${r.non2xx} answers not 2xx and ${r.errors} errors or timeouts of ${r.total} requests`,
    );
}

/**
 * Prints each failure as a FAILED line and makes the run exit 1: a refusal costs less than an
 * acknowledgement, so figures that include some are not the acknowledged path's.
 */
export function failOn(failures: readonly string[]): void {
  for (const failure of failures) process.stdout.write(`FAILED ${failure}\n`);
  if (failures.length > 0) process.exitCode = 1;
}
