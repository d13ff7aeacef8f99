/** How a Node.js response ends, checked as well as listened for: a `'close'` that came never comes again. */
import type { NodeResponse } from '../answer/outcome.js';

/**
 * Whether the client is gone: the response was closed (its socket destroyed, or `'close'` already
 * emitted) before the app finished it. Such a request is answered to nobody.
 */
export function clientGone(raw: NodeResponse): boolean {
  return raw.destroyed === true || (raw.closed === true && !raw.writableEnded);
}

/**
 * Calls `listener` once the response is over: completed or aborted. A `'close'` that came before the
 * listener could be attached never comes again, so an already closed response calls it at once.
 *
 * @example
 * whenResponseEnds(res, lease.release); // released even if the client hung up during the acquire
 */
export function whenResponseEnds(raw: NodeResponse, listener: () => unknown): void {
  if (raw.closed === true || raw.destroyed === true) listener();
  else raw.once('close', listener);
}
