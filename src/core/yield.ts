/**
 * Letting the event loop run in the middle of long work. `await` on a settled promise does not:
 * only a macrotask lets Node deliver a signal (SIGTERM's handler), run a timer or read a socket.
 */

/** Resolves after the event loop has polled for I/O and signals once. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
