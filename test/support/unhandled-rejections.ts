/**
 * Runs `work` and returns the rejections left unhandled meanwhile, and within `settleMs` after it
 * (a promise dropped by the code under test may fail later): what would end a Node process.
 */
export async function unhandledRejectionsOf(work: () => Promise<void>, settleMs: number): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  return unhandled;
}
