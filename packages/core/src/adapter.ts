/**
 * `@tollgate/core/adapter`: what an adapter author builds a framework's middleware from. An app never
 * needs it: the main entry, `@tollgate/core`, holds what apps use.
 *
 * An adapter is its framework's code only: it describes its framework as a {@link Platform} (how the
 * core reads a request, a {@link RequestAccess}: {@link nodeRequestAccess} for Node.js-shaped ones; how
 * it writes a response, a {@link ResponseAccess}: {@link nodeResponses} for Node.js responses, {@link
 * WebAnswer} for Fetch ones), calls {@link createAdapterLimiter} once per limiter, runs each request
 * through its `handle`, and puts its key controls on the middleware. `docs/writing-an-adapter.md`
 * walks through one.
 */

export {
  type EarlierHeaders,
  type ProfiledHeaders,
  type StackedHeaders,
  stackHeaders,
} from './http/answer/header-stacking.js';
export { createHeaderWriter, type HeaderWriter } from './http/answer/headers.js';
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
  type AdapterLimiter,
  adapterLimiterOf,
  createAdapterLimiter,
  type Platform,
} from './http/pipeline/adapter-limiter.js';
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
