/**
 * `@tollgate/core/adapter`: what an adapter author builds a framework's middleware from. An app never
 * needs it: the main entry, `@tollgate/core`, holds what apps use.
 *
 * An adapter is its framework's code only: it reads requests through a {@link RequestAccess} (Node.js
 * shaped requests: {@link nodeRequestAccess}), builds its limiter with {@link createHttpLimiter} once,
 * runs each request through {@link rateLimitLifecycle} with a {@link ResponseAccess} ({@link
 * nodeResponses} for Node.js responses, {@link WebAnswer} for Fetch ones), and puts
 * {@link keyControls} on its middleware. `docs/writing-an-adapter.md` walks through one.
 */

export {
  createHeaderWriter,
  type EarlierHeaders,
  type HeaderWriter,
  type ProfiledHeaders,
  type StackedHeaders,
  stackHeaders,
} from './http/answer/headers.js';
export type { ConcurrencyOutcome, NodeResponse, RateLimitOutcome } from './http/answer/outcome.js';
export { endWithRejection, type WritableNodeResponse } from './http/answer/rejections.js';
export type { ClientIpSetting } from './http/identity/client-ip-setting.js';
export {
  answersLeftmostForwarded,
  type NodeShapedRequest,
  nodeRequestAccess,
} from './http/identity/node-requests.js';
export type { RequestAccess } from './http/identity/request-keys.js';
export { type SuppliedAddress, suppliedAddressAccess } from './http/identity/supplied-address.js';
export type { AdapterSettings } from './http/options/option-types.js';
export { mergeRateLimitOptions, validateInheritedOptions } from './http/options/route-options.js';
export {
  createHttpConcurrencyLimiter,
  type HttpConcurrencyLimiter,
} from './http/pipeline/http-concurrency.js';
export { createHttpLimiter, type HttpLimiter } from './http/pipeline/http-limiter.js';
export { groupKeyControls, keyControls } from './http/pipeline/key-controls.js';
export {
  type CheckingLimiter,
  concurrencyLifecycle,
  type Handled,
  handledError,
  type LeasingLimiter,
  type ResponseAccess,
  rateLimitLifecycle,
} from './http/pipeline/lifecycle.js';
export { nodeResponses, type ServerResponseLike } from './http/pipeline/node-responses.js';
export { type RouteLimiterSettings, RouteLimiters } from './http/pipeline/route-limiters.js';
export { type WaitUntilContext, WebAnswer } from './http/pipeline/web-answer.js';
