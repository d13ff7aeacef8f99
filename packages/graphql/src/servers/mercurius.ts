/**
 * The Mercurius hooks: the operation is admitted or refused in `preExecution`, before it executes, and
 * settled in `onResolution`, where `extensions.cost` is added. A refused operation never reaches
 * `onResolution`, and Mercurius answers its error without the result's extensions: Fastify's
 * `preSerialization` hook adds `extensions.cost` to that answer.
 */
import { type DocumentNode, type ExecutionResult, GraphQLError, type GraphQLSchema } from 'graphql';
import { type Admitted, type CostExtension, createCostLimit } from '../limit/cost-limit.js';
import type { CostLimitOptions } from '../options.js';

/**
 * A Mercurius context, as far as the hooks and a key function read it: Fastify's reply, for the headers
 * and the operation name, and its request, for the key (`context.reply.request.ip`).
 */
export interface MercuriusContextLike {
  readonly reply: {
    header(name: string, value: string): unknown;
    readonly request: {
      readonly ip: string;
      readonly headers: Readonly<Record<string, string | string[] | undefined>>;
      readonly body?: unknown;
      readonly query?: unknown;
    };
  };
}

/** A Fastify app with Mercurius registered, as far as {@link mercuriusCostLimit} uses it. */
export interface MercuriusAppLike<Context> {
  addHook(
    name: 'preSerialization',
    hook: (request: unknown, reply: object, payload: unknown) => Promise<unknown>,
  ): unknown;
  readonly graphql: {
    addHook(
      name: 'preExecution',
      hook: (
        schema: GraphQLSchema,
        document: DocumentNode,
        context: Context,
        variables: Record<string, unknown> | undefined,
      ) => Promise<void>,
    ): void;
    addHook(
      name: 'onResolution',
      hook: (execution: ExecutionResult, context: Context) => Promise<void>,
    ): void;
  };
}

/**
 * Cost-based rate limiting for Mercurius: adds a `preExecution` hook that estimates an operation's
 * cost from its document and variables and reserves it before it executes, or refuses it without
 * executing (429, or 403 when it costs more than the budget can ever hold), and an `onResolution`
 * hook that counts the actual cost from the result and settles it. Call it after registering
 * Mercurius. The response carries `extensions.cost` and the rate-limit headers.
 *
 * @example
 * await app.register(mercurius, { schema, resolvers });
 * mercuriusCostLimit(app, { limit: 1000, window: '1m', store, key: (context) => `ip:${context.reply.request.ip}` });
 */
export function mercuriusCostLimit<Context extends MercuriusContextLike>(
  app: MercuriusAppLike<Context>,
  options: CostLimitOptions<Context>,
): void {
  const limit = createCostLimit(options);
  const admitted = new WeakMap<object, Admitted>();
  // By reply, then by the operation's place in a batch (`undefined` when the request is not a batch).
  const refusals = new WeakMap<object, Map<number | undefined, CostExtension>>();
  app.graphql.addHook('preExecution', async (schema, document, context, variables) => {
    const admission = await limit.admit(
      { schema, document, operationName: operationNameOf(context), variables },
      context,
    );
    for (const [name, value] of Object.entries(admission.headers)) context.reply?.header(name, value); // no reply over WebSocket
    if (!admission.admitted) {
      // Mercurius answers with the status of the error's `originalError`.
      const { error, extension } = admission;
      if (context.reply !== undefined)
        refusalsOf(refusals, context.reply).set(operationIdOf(context), extension);
      throw new GraphQLError(error.message, { originalError: error, extensions: error.extensions });
    }
    admitted.set(context, admission);
  });
  app.graphql.addHook('onResolution', async (execution, context) => {
    const admission = admitted.get(context);
    if (admission === undefined) return;
    admitted.delete(context);
    const cost = await limit.settle(admission, execution.data);
    (execution as { extensions?: Record<string, unknown> }).extensions = { ...execution.extensions, cost };
  });
  app.addHook('preSerialization', async (_request, reply, payload) => {
    const refused = refusals.get(reply);
    if (refused === undefined) return payload;
    refusals.delete(reply);
    if (!Array.isArray(payload)) return withCost(payload, refused.get(undefined));
    return payload.map((result, operationId) => withCost(result, refused.get(operationId)));
  });
}

/** The refusals recorded for one reply, created on first use. */
function refusalsOf(
  refusals: WeakMap<object, Map<number | undefined, CostExtension>>,
  reply: object,
): Map<number | undefined, CostExtension> {
  let byOperation = refusals.get(reply);
  if (byOperation === undefined) {
    byOperation = new Map();
    refusals.set(reply, byOperation);
  }
  return byOperation;
}

/** `result` with `extensions.cost` added, when there is a cost and `result` is a GraphQL response. */
function withCost(result: unknown, cost: CostExtension | undefined): unknown {
  if (cost === undefined || typeof result !== 'object' || result === null) return result;
  const { extensions } = result as { extensions?: Record<string, unknown> };
  return { ...result, extensions: { ...extensions, cost } };
}

/** The operation's place in a batched request; `undefined` when the request is not a batch. */
function operationIdOf(context: object): number | undefined {
  const { operationId } = context as { operationId?: unknown };
  return typeof operationId === 'number' ? operationId : undefined;
}

/**
 * The operation the client named: Mercurius's hooks are not given it, its request is (in a batch, the
 * operation's own entry, by the `operationId` Mercurius puts on its context).
 */
function operationNameOf(context: MercuriusContextLike): string | undefined {
  const request = context.reply?.request as { body?: unknown; query?: unknown } | undefined;
  const operationId = operationIdOf(context);
  const body =
    Array.isArray(request?.body) && operationId !== undefined ? request.body[operationId] : request?.body;
  for (const source of [body, request?.query]) {
    const name = (source as { operationName?: unknown } | undefined)?.operationName;
    if (typeof name === 'string') return name;
  }
  return undefined;
}
