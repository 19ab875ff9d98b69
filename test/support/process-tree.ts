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

/** The process's command name (its `comm`), or undefined once it is gone. */
export function commandName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The parent of a running process, or undefined once it is gone. */
export const parentOf = (pid: number) => stat(pid)?.parent;

/**
 * Every running process whose command line holds `text` (a scratch folder's path, say): finds
 * what a tool started even after the tool has exited and its children were handed to init.
 */
export function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return running(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    });
}

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
