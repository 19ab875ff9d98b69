import { readdirSync, readFileSync } from 'node:fs';

/** A process's state and parent from /proc/<pid>/stat; undefined once it is gone. */
function stat(pid: number): { state: string; parent: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: the fields follow its last ')'.
  const [state = '', parent = ''] = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state, parent: Number(parent) };
}

/** Whether the process still runs (a zombie has ended: only its parent has not collected it). */
export const running = (pid: number) => {
  const found = stat(pid);
  return found !== undefined && found.state !== 'Z';
};

/** Every running process descended from `root`. */
export function descendants(root: number): number[] {
  const pids = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
  const childrenOf = new Map<number, number[]>();
  for (const pid of pids) {
    const found = stat(pid);
    if (!found || found.state === 'Z') continue;
    childrenOf.set(found.parent, [...(childrenOf.get(found.parent) ?? []), pid]);
  }
  const result: number[] = [];
  const next = [root];
  for (let pid = next.pop(); pid !== undefined; pid = next.pop()) {
    const children = childrenOf.get(pid) ?? [];
    result.push(...children);
    next.push(...children);
  }
  return result;
}

/** Waits up to `ms` for every process of `pids` to end (a child's own children may take a moment). */
export async function untilEnded(pids: readonly number[], ms = 10_000): Promise<number[]> {
  for (let waited = 0; pids.some(running) && waited < ms; waited += 100)
    await new Promise((done) => setTimeout(done, 100));
  return pids.filter(running);
}
