/**
 * The HTTP-shaped core every adapter calls: from a request to an outcome (key, cost, decision, headers),
 * from a limited request to its answer, and from an ended response to a refund. Adapters add only the
 * framework's reading and writing.
 */

import { LimiterEvents } from '../../diagnostics/publish.js';
import { bucketOwner } from '../../limiter/bucket-key.js';
import type { ConsumeOptions, ReserveOptions } from '../../limiter/limiter.js';
import type { StoreErrorAction } from '../../limiter/limiter-options.js';
import type { Reservation } from '../../limiter/reservation.js';
import type { Decision } from '../../model/decision.js';
import { TollgateOptionError } from '../../support/option-error.js';
import { StoreUnavailableError } from '../../support/store-error.js';
import { Warnings } from '../../support/warnings.js';
import type { NodeResponse, RateLimitInfo, RateLimitOutcome, RateLimitRejection } from '../answer/outcome.js';
import { refusalStatus } from '../answer/problem.js';
import { ProblemAnswers, rejectionOf } from '../answer/rejections.js';
import { decisionAtTurn } from '../answer/turn.js';
import { compileAllowList } from '../identity/allow-list.js';
import { requestIdentity } from '../identity/request-identity.js';
import type { RequestAccess } from '../identity/request-keys.js';
import type {
  AdapterSettings,
  MeteredCost,
  PerRequest,
  RateLimitOptions,
  StoreFailureAnswer,
} from '../options/option-types.js';
import { resolveRateLimitOptions } from '../options/options.js';
import type { KeyControls } from './key-controls.js';
import { boundLimiters, keyControlsOf } from './policy-limiters.js';
import { responder } from './respond.js';
import { responseCounting } from './response-counting.js';
import { SetupChecks } from './setup-checks.js';

/**
 * A rate limiter for HTTP requests of one framework. Build once per middleware or route. Its
 * {@link KeyControls} are what the adapter's middleware carries.
 */
export interface HttpLimiter<Req, Res = unknown> extends KeyControls {
  /** The limiter's name: its namespace in the store. */
  readonly name: string;
  /** Where the adapter puts a checked request's `info` for later code; `undefined`: nowhere. */
  readonly requestPropertyName: string | undefined;
  /** The adapter's own `handler` option, as validated (its type is the adapter's); `undefined`: none. */
  readonly handler: unknown;
  /** Whether it was made with `overrides: true`: its {@link KeyControls} may set overrides. */
  readonly overrides: boolean;
  /**
   * Whether it was made with `delay`: a check may hold a request for its turn, and should be given a
   * signal that aborts when the client goes away.
   */
  readonly waits: boolean;
  /**
   * Decides a request: skip, allow or limit, with the headers to send. Charges the store once per call.
   * With `delay`, an allowed request may resolve only at its turn; `signal` aborting while it waits
   * gives the turn back and rejects with the signal's reason.
   */
  check(request: Req, signal?: AbortSignal): Promise<RateLimitOutcome>;
  /**
   * The answer to a limited request: `statusCode` (429), or 403 when its cost exceeds a capacity; the
   * body is the `message` option, else RFC 9457 problem details.
   */
  rejection(request: Req, info: RateLimitInfo): Promise<RateLimitRejection>;
  /**
   * Call for every allowed request, with its `info`, the framework's response and the Node.js response
   * under it: once the response has ended, a metered cost (`cost: { reserve, settle }`) is settled, and
   * with `skipSuccessfulRequests` or `skipFailedRequests` the request gets its tokens back if it should
   * not count. Otherwise does nothing. Never throws.
   */
  countByResponse(info: RateLimitInfo, request: Req, response: Res, raw: NodeResponse): void;
  /**
   * Logs a setup warning of the adapter's once for this limiter, through its logger, unless its
   * `warnings` option switches the code off. For a rule only the adapter can see (Fastify: a route the
   * plugin never saw). `message` may be a function, called only when the warning is logged: an adapter
   * that reports from a request's path then builds no text per request.
   */
  warnOnce(code: AdapterWarningCode, message: string | (() => string)): void;
}

/** The warning codes an adapter reports through {@link HttpLimiter.warnOnce}. */
export type AdapterWarningCode = 'TOLLGATE_ROUTE_NOT_SEEN';

const SKIPPED: RateLimitOutcome = Object.freeze({ kind: 'skipped' });

/** What `countByResponse` is when every request counts. */
const COUNT_EVERY_RESPONSE = () => {};

/**
 * Builds an adapter's limiter from the user's options; bad options throw here.
 *
 * @example
 * // inside an adapter
 * const limiter = createHttpLimiter(options, expressAccess, { adapter: '@tollgate/express' });
 * const outcome = await limiter.check(req);
 */
export function createHttpLimiter<Req, Res = unknown>(
  options: RateLimitOptions<Req, Res>,
  access: RequestAccess<Req>,
  settings: AdapterSettings,
): HttpLimiter<Req, Res> {
  const config = resolveRateLimitOptions(options, settings);
  const warnings = new Warnings(config.logger, config.warnings);
  if (settings.inRequestHandler) {
    // Limiters made per request share their options, hence their name but for its counter suffix: one
    // line for them all.
    warnings.oncePerProcess(
      'TOLLGATE_CREATED_IN_HANDLER',
      `${settings.adapter} ${config.name.replace(/-\d+$/, '')}`,
      `a limiter (${config.name}) was created while a request was being handled. One created per request ` +
        'starts empty and limits nothing: create limiters once, when the app starts, and use them in handlers.',
    );
  }
  const staticAnswer = typeof config.onStoreError === 'function' ? undefined : config.onStoreError;
  const answerOf = typeof config.onStoreError === 'function' ? config.onStoreError : undefined;

  /** Logs a store failure (unless the store reported it already) and tells the core what to do. */
  function failed(error: unknown, answer: StoreFailureAnswer): StoreErrorAction {
    if (!(error instanceof StoreUnavailableError && error.reported)) warnings.storeError(error, answer);
    return answer === 'insurance' ? 'insurance' : 'throw';
  }

  /** {@link failed}, for a check: `'allow'` and `'deny'` leave the limiter as an {@link AnsweredFailure}. */
  function checkFailed(error: unknown, answer: StoreFailureAnswer): StoreErrorAction {
    const action = failed(error, answer);
    if (answer === 'insurance') return action;
    throw new AnsweredFailure(answer, error);
  }

  const limiters = boundLimiters(config, staticAnswer && ((error) => failed(error, staticAnswer)));
  const setup = new SetupChecks(access, warnings, settings.clientIpSetting);
  const allowListed = compileAllowList(config.allowList as RateLimitOptions<Req>['allowList'], access);
  const events = new LimiterEvents(config.name);
  const respond = responder<Req>(config, warnings);
  const problemAnswers = new ProblemAnswers();
  // A fixed text answer (`message: 'Too many requests'`) with the usual status: its bytes made once.
  const staticText =
    typeof config.message === 'string'
      ? rejectionOf(config.statusCode, 'text/plain; charset=utf-8', config.message)
      : undefined;
  // `cost: { reserve, settle }`: `reserve` is charged as a plain cost is, `settle` runs after the response.
  const metered = typeof config.cost === 'object' ? (config.cost as MeteredCost<Req, Res>) : undefined;
  const chargedCost = (metered === undefined ? config.cost : metered.reserve) as PerRequest<Req, number>;
  // Options that are the same for every request are made once, not per check. The defaults (cost 1, no
  // dry run) are passed as no options at all: an options object the limiter must read field by field, as
  // own fields only (Object.hasOwn, a call each), where no options cost it nothing to read.
  const checkOptionsFixed =
    answerOf === undefined && typeof chargedCost !== 'function' && typeof config.dryRun !== 'function';
  const onStoreError =
    staticAnswer === undefined || staticAnswer === 'insurance'
      ? undefined
      : (error: unknown) => checkFailed(error, staticAnswer);
  const staticCheckOptions: ConsumeOptions | undefined =
    !checkOptionsFixed || (chargedCost === 1 && config.dryRun === false && onStoreError === undefined)
      ? undefined
      : Object.freeze({ cost: chargedCost, dryRun: config.dryRun, ...(onStoreError && { onStoreError }) });
  const countByResponse = responseCounting<Req, Res>(
    {
      skipSuccessfulRequests: config.skipSuccessfulRequests,
      skipFailedRequests: config.skipFailedRequests,
      requestWasSuccessful: config.requestWasSuccessful,
      settle: metered?.settle,
    },
    warnings,
  );

  const identityOf = requestIdentity(config.key, access, warnings, settings);
  const maxWaitMs = config.delay?.maxWaitMs;

  /** A request not checked (`skip`, `allowList`). */
  function skipped(): RateLimitOutcome {
    events.undecided('skipped', true, false, undefined, undefined, Number.NaN);
    return SKIPPED;
  }

  return {
    name: config.name,
    requestPropertyName: config.requestPropertyName,
    handler: config.handler,
    overrides: config.limiterSettings.overrides,
    waits: maxWaitMs !== undefined,
    countByResponse: countByResponse ?? COUNT_EVERY_RESPONSE,

    async check(request, signal) {
      if (config.skip && (await config.skip(request))) return skipped();
      setup.request(request);
      const keyed = identityOf(request);
      const identity = typeof keyed === 'string' ? keyed : await keyed;
      setup.identity(identity);
      if (allowListed !== undefined && (await allowListed(request, identity))) return skipped();
      // A static cost was checked at construction; a computed one is checked here, so a bad one is
      // reported as the app's bug rather than caught below as a store failure.
      const cost =
        typeof chargedCost === 'function'
          ? checkedCost(await chargedCost(request), settings.adapter)
          : chargedCost;
      const dryRun =
        typeof config.dryRun === 'function'
          ? checkedDryRun(await config.dryRun(request), settings.adapter)
          : config.dryRun;
      const forRequest = limiters.forRequest(request);
      const bound = forRequest instanceof Promise ? await forRequest : forRequest;
      const startedMs = events.storeCallStarts();
      let decision: Decision;
      let reservation: Reservation | undefined;
      try {
        const checkOptions: ConsumeOptions | undefined = checkOptionsFixed
          ? staticCheckOptions
          : answerOf !== undefined
            ? {
                cost,
                dryRun,
                onStoreError: async (error) =>
                  checkFailed(error, storeFailureAnswer(await answerOf(error, request), settings.adapter)),
              }
            : onStoreError === undefined
              ? { cost, dryRun }
              : { cost, dryRun, onStoreError };
        // A metered cost is reserved (charged as `consume` charges it) and settled once the response ends.
        // With `delay`, the request may wait for its turn (a metered cost never waits: see the options).
        if (metered !== undefined) {
          reservation = await bound.limiter.reserve(identity, cost, reserveOptionsOf(checkOptions));
          decision = reservation.decision;
        } else if (maxWaitMs === undefined) {
          decision = await bound.limiter.consume(identity, checkOptions);
        } else {
          const waited = await bound.limiter.consume(identity, {
            ...checkOptions,
            maxWait: maxWaitMs,
            signal,
          });
          decision = decisionAtTurn(waited);
        }
      } catch (error) {
        // The client went away while it waited: its turn was given back, and nobody is left to answer.
        if (signal?.aborted) throw error instanceof AnsweredFailure ? error.cause : error;
        // The store failed and the answer is to pass or to fail; anything else is the app's error.
        if (!(error instanceof AnsweredFailure)) throw error;
        const { answer } = error;
        const owner = events.decisionsObserved ? bucketOwner(config.name, identity) : undefined;
        events.undecided('degraded', answer === 'allow', dryRun, cost, owner, startedMs);
        // A dry run never fails a request, not even for its store.
        return answer === 'allow' || dryRun ? SKIPPED : { kind: 'error', headers: {}, error: error.cause };
      }
      return respond(request, decision, identity, bound, dryRun, reservation);
    },

    async rejection(request, info) {
      const status = refusalStatus(info.decision, config.statusCode);
      const message =
        typeof config.message === 'function' ? await config.message(request, info) : config.message;
      if (message === undefined) return problemAnswers.answer(info.decision, status);
      if (typeof message !== 'string')
        return rejectionOf(status, 'application/json; charset=utf-8', JSON.stringify(message));
      if (message === staticText?.body && status === staticText.status) return staticText;
      return rejectionOf(status, 'text/plain; charset=utf-8', message);
    },

    warnOnce(code, message) {
      if (!warnings.due(code)) return;
      warnings.once(code, `${settings.adapter}: ${typeof message === 'function' ? message() : message}`);
    },

    ...keyControlsOf(limiters, settings.adapter),
  };
}

/**
 * A check's store failure that `onStoreError` answered with `'allow'` or `'deny'`: how the answer leaves
 * the limiter for the check to give, the store's error as its `cause`.
 */
class AnsweredFailure {
  constructor(
    readonly answer: 'allow' | 'deny',
    readonly cause: unknown,
  ) {}
}

/** What the app's `onStoreError` function answered, checked. */
function storeFailureAnswer(answer: unknown, adapter: string): StoreFailureAnswer {
  if (answer === 'insurance' || answer === 'allow' || answer === 'deny') return answer;
  throw new TollgateOptionError(
    `${adapter}: the onStoreError function must return 'insurance', 'allow' or 'deny'; got ${String(answer)}`,
  );
}

function checkedDryRun(dryRun: unknown, adapter: string): boolean {
  if (typeof dryRun === 'boolean') return dryRun;
  throw new TollgateOptionError(
    `${adapter}: the dryRun function must return true or false; got ${String(dryRun)}`,
  );
}

function checkedCost(cost: unknown, adapter: string): number {
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost <= 0) {
    throw new TollgateOptionError(
      `${adapter}: the cost function must return a positive number; got ${String(cost)}`,
    );
  }
  return cost;
}

/** A check's options as `reserve` takes them: its cost is given apart. */
function reserveOptionsOf(options: ConsumeOptions | undefined): ReserveOptions | undefined {
  if (options === undefined) return undefined;
  const { cost: _given, ...rest } = options;
  return rest;
}
