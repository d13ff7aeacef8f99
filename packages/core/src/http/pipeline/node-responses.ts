/** How the core writes to a Node.js `ServerResponse` itself, for frameworks whose response is one (Express's `res`). */
import type { NodeResponse } from '../answer/outcome.js';
import { endWithRejection, type WritableNodeResponse } from '../answer/rejections.js';
import type { ResponseAccess } from './lifecycle.js';

/** What {@link nodeResponses} uses of a Node.js `ServerResponse`. */
export interface ServerResponseLike extends Omit<NodeResponse, 'statusCode'>, WritableNodeResponse {
  getHeader(name: string): unknown;
  removeHeader(name: string): unknown;
}

/**
 * The {@link ResponseAccess} of a Node.js `ServerResponse`: headers through Node's own `setHeader` (a
 * framework's setter, such as Express's `res.set`, also lower-cases each name to look for
 * `Content-Type`), the refusal with `endWithRejection`, the info on the request. An adapter whose
 * refusal goes another way keeps the rest: `{ ...nodeResponses, send }`.
 *
 * @example
 * const handle = rateLimitLifecycle(limiter, nodeResponses);
 * const handled = await handle(req, res);
 */
export const nodeResponses: ResponseAccess<unknown, ServerResponseLike> = {
  node: (res) => res,
  getHeader: (res, name) => res.getHeader(name),
  setHeaders(res, headers) {
    // Own keys only: names a polluted Object.prototype holds must not become headers.
    for (const name of Object.keys(headers)) res.setHeader(name, headers[name] as string);
  },
  removeHeader: (res, name) => void res.removeHeader(name),
  send: endWithRejection,
};
