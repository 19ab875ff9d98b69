/**
 * Registers hooks noting, for each test of the enclosing suite, the delay of every wait the client
 * asks for (client/src/request/wait.ts): what it decided to wait. The gaps a test sees on the wall
 * clock add whatever a loaded machine's late timers add, so their upper bounds cannot tell a wrong
 * wait from a busy machine; the delays asked for can.
 */
export function useRecordedWaits(): { readonly delays: number[] } {
  const original = globalThis.setTimeout;
  const delays: number[] = [];
  beforeEach(() => {
    delays.splice(0);
    // Everyone else's timers (fetch's, mocha's) pass through as they were, arguments and all.
    const recording = (handler: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      if (new Error().stack?.includes('/client/src/request/wait.ts')) delays.push(ms ?? 0);
      return original(handler, ms, ...(args as []));
    };
    globalThis.setTimeout = recording as typeof setTimeout;
  });
  afterEach(() => {
    globalThis.setTimeout = original;
  });
  return { delays };
}
