import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RedisTarget } from '../../shared/redis/redis-target.ts';
import { cleanEnv, repoRoot, runCommand, type ScriptResult } from './run-script.ts';

/**
 * Runs, in a process of its own, a program whose example consumer's handler never settles: at its
 * first job it closes the consumer with a 300 ms deadline, prints the outcome, and calls no
 * process.exit. Resolves when the program ends (it must end by itself), or fails after 30 s.
 */
export function runHungConsumerProgram(redis: RedisTarget, prefix: string): Promise<ScriptResult> {
  const module = pathToFileURL(join(repoRoot, 'examples/consumer/start-consumer.ts')).href;
  const code = [
    `const { startConsumer } = await import(${JSON.stringify(module)});`,
    'const options = { redis: JSON.parse(process.env.TARGET), prefix: process.env.QUEUE_PREFIX };',
    'const consumer = startConsumer(options, () => new Promise(() => undefined));',
    "consumer.queue.once('active', async () => console.log(await consumer.close(300)));",
  ].join('\n');
  const env = cleanEnv({ TARGET: JSON.stringify(redis), QUEUE_PREFIX: prefix });
  return runCommand(process.execPath, ['--input-type=module', '-e', code], env, 30_000);
}
