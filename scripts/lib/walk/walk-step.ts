/**
 * One step of try-stack's inbox walk: prints its name, what it saw and how long it took, and throws
 * naming the step when its outcome is not the one the docs promise, so a rerun fails loudly at the
 * first wrong answer instead of printing figures about a broken tray.
 */
export async function step(name: string, run: () => Promise<string>): Promise<void> {
  const started = performance.now();
  const took = () => `${Math.round(performance.now() - started)} ms`;
  try {
    const saw = await run();
    process.stdout.write(`  ok   ${name} (${took()}): ${saw}\n`);
  } catch (error) {
    process.stdout.write(`  FAIL ${name} (${took()}): ${(error as Error).message}\n`);
    throw new Error(`inbox walk failed at "${name}": ${(error as Error).message}`, { cause: error });
  }
}

/** Throws `message` unless `holds`: a step's outcome check. */
export function expectThat(holds: boolean, message: string): asserts holds {
  if (!holds) throw new Error(message);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks `probe` every `everyMs` until it answers a value; throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}
