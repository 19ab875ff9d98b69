import type { Writable } from 'node:stream';

/** How many writes of `item` `stage` takes before it asks to wait, with nothing reading it. */
export function acceptedWhileStalled(stage: Writable, item: unknown): number {
  let accepted = 0;
  while (stage.write(item) && accepted < 1_000) accepted += 1;
  stage.destroy();
  return accepted;
}
