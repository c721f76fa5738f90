/**
 * The serving thread first. A flagserve process runs more threads than the one that answers
 * requests: V8's helpers (its optimizing compiler and garbage collector), libuv's file-system
 * pool and the parse worker. During a reload they can all be ready to run at once, and on a
 * machine of two cores they took both for 8 ms while the serving thread waited for one with a
 * request in hand (`perf sched` during `npm run bench:reload`'s 10 000-flag edits).
 *
 * Given a lower CPU priority, they still run at full speed on an idle core, but when the serving
 * thread is ready too the kernel runs it first. Linux lets a process lower its own threads'
 * priority without privileges (never raise it back), and `/proc/self/task` lists them; elsewhere
 * there is no portable way, and nothing is done. Only for a process flagserve owns (the CLI's): a
 * program that embeds the server keeps its threads as it set them.
 */
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** The nice value given to the helper threads: a tenth of the serving thread's weight when both wait for a core. */
const HELPER_NICE = 10;

/**
 * Gives every thread of this process but the main one HELPER_NICE, unless it is lower already.
 * Threads started later inherit their creator's priority (the main thread's, for most).
 */
export function lowerHelperThreads(): void {
  if (process.platform !== "linux") return;
  let threads: string[];
  try {
    threads = readdirSync("/proc/self/task");
  } catch {
    return;
  }
  for (const thread of threads) {
    const id = Number(thread);
    if (id === process.pid) continue; // the main thread's id is the process's
    try {
      if (getPriority(id) >= HELPER_NICE) continue;
      setPriority(id, HELPER_NICE);
    } catch {
      // Gone since the listing, or not allowed: a priority is a hint, and the server runs the same without it.
    }
  }
}
