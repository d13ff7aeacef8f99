/**
 * The Envelop plugin, for GraphQL Yoga and every Envelop-based server: the operation is admitted or
 * refused in `onExecute`, before any resolver runs, and settled in `onExecuteDone`.
 */
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import { createCostLimit } from '../limit/cost-limit.js';
import type { CostLimitOptions } from '../options.js';

/** What Envelop's `onExecute` is given, as far as the plugin reads it. */
export interface EnvelopExecutePayload<Context> {
  readonly args: {
    readonly schema: GraphQLSchema;
    readonly document: DocumentNode;
    readonly operationName?: string | null | undefined;
    readonly variableValues?: { readonly [name: string]: unknown } | null | undefined;
    readonly contextValue: Context;
  };
  setResultAndStopExecution(result: ExecutionResult): void;
}

/** What Envelop's `onExecuteDone` is given, as far as the plugin reads it. */
export interface EnvelopExecuteDonePayload {
  readonly result: ExecutionResult | AsyncIterable<unknown>;
  setResult(result: ExecutionResult): void;
}

/** The plugin: an Envelop plugin, which GraphQL Yoga takes in `plugins`. */
export interface EnvelopCostLimitPlugin<Context> {
  onExecute(
    payload: EnvelopExecutePayload<Context>,
  ): Promise<{ onExecuteDone(payload: EnvelopExecuteDonePayload): Promise<void> } | undefined>;
}

/**
 * Cost-based rate limiting for GraphQL Yoga and Envelop: an operation's cost is estimated from its
 * document and variables and reserved before it runs, or it is refused without running (429, or 403
 * when it costs more than the budget can ever hold); after it ran, its actual cost is counted from the
 * result and settled. The response carries `extensions.cost`, and on Yoga the rate-limit headers
 * (Yoga reads `extensions.http` and removes it from the body).
 *
 * @example
 * const yoga = createYoga({
 *   schema,
 *   plugins: [useCostLimit({ limit: 1000, window: '1m', store, key: ({ request }) => `ip:${request.headers.get('x-real-ip')}` })],
 * });
 */
export function useCostLimit<Context = Record<string, unknown>>(
  options: CostLimitOptions<Context>,
): EnvelopCostLimitPlugin<Context> {
  const limit = createCostLimit(options);
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const admission = await limit.admit(
        {
          schema: args.schema,
          document: args.document,
          operationName: args.operationName,
          variables: args.variableValues,
        },
        args.contextValue,
      );
      if (!admission.admitted) {
        const { error, headers, extension } = admission;
        setResultAndStopExecution({
          errors: [error],
          extensions: { cost: extension, http: { status: error.statusCode, headers } },
        });
        return undefined;
      }
      return {
        async onExecuteDone({ result, setResult }) {
          // A streamed result (@defer, @stream) stays charged its estimate.
          if (Symbol.asyncIterator in result) return;
          const cost = await limit.settle(admission, result.data);
          const extensions = {
            ...result.extensions,
            cost,
            http: httpOf(result.extensions, admission.headers),
          };
          setResult({ ...result, extensions });
        },
      };
    },
  };
}

/** The result's `extensions.http` with the rate-limit headers added (another plugin may have set some). */
function httpOf(
  extensions: Record<string, unknown> | undefined,
  headers: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const http = (extensions?.http ?? {}) as { headers?: Record<string, string> };
  return { ...http, headers: { ...http.headers, ...headers } };
}
