import { fork } from 'node:child_process';
import type {
  BenchClientJob,
  BenchClientSamples,
  FromBenchClient,
  ToBenchClient,
} from './bench-api-client.ts';

/** `bench:api`'s client process: one job at a time, warmed up, then measured when told. */
export interface BenchClient {
  /** Runs `job`; `warmed` is called between the warm-up and the counted rounds. */
  run(job: BenchClientJob, warmed: () => void): Promise<BenchClientSamples>;
  exit(): void;
}

/** Forks lib/bench-api-client.ts: a real client never shares the server's event loop. */
export function forkBenchClient(): BenchClient {
  const client = fork(new URL('./bench-api-client.ts', import.meta.url), { stdio: 'inherit' });
  process.once('exit', () => client.kill());
  const replies: FromBenchClient[] = [];
  let waiting: ((reply: FromBenchClient) => void) | undefined;
  client.on('message', (reply: FromBenchClient) => {
    if (waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve(reply);
    } else replies.push(reply);
  });
  const exited = new Promise<never>((_resolve, reject) =>
    client.once('exit', (code) => reject(new Error(`the bench client exited (${code})`))),
  );
  exited.catch(() => undefined);
  const reply = () =>
    Promise.race([
      exited,
      new Promise<FromBenchClient>((resolve) => {
        const queued = replies.shift();
        if (queued) resolve(queued);
        else waiting = resolve;
      }),
    ]);
  const tell = (message: ToBenchClient) => client.send(message);
  return {
    async run(job, warmed) {
      tell({ kind: 'run', job });
      if ((await reply()).kind !== 'warmed') throw new Error('bench client: expected warmed');
      warmed();
      tell({ kind: 'go' });
      const done = await reply();
      if (done.kind !== 'samples') throw new Error('bench client: expected samples');
      return done.samples;
    },
    exit: () => tell({ kind: 'exit' }),
  };
}
