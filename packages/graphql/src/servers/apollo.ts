/**
 * The Apollo Server plugin: the operation is admitted or refused in `didResolveOperation`, before it
 * executes, and settled in `willSendResponse`, where `extensions.cost` is added.
 */
import type { DocumentNode, GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { Admitted, Refused } from '../limit/cost-limit.js';
import { createCostLimit } from '../limit/cost-limit.js';
import type { CostLimitOptions } from '../options.js';

/** Apollo Server's request context, as far as the plugin reads it. */
export interface ApolloRequestContext<Context> {
  readonly schema: GraphQLSchema;
  readonly document?: DocumentNode | undefined;
  readonly operationName?: string | null | undefined;
  readonly request: { readonly variables?: Record<string, unknown> | undefined };
  readonly contextValue: Context;
  readonly response: {
    readonly http: { status?: number | undefined; readonly headers: Map<string, string> };
    body?:
      | {
          readonly kind: 'single';
          readonly singleResult: {
            readonly data?: Record<string, unknown> | null | undefined;
            readonly errors?: readonly GraphQLFormattedError[] | undefined;
            extensions?: Record<string, unknown> | undefined;
          };
        }
      | { readonly kind: 'incremental' }
      | undefined;
  };
}

/** The plugin: an Apollo Server plugin, which `new ApolloServer({ plugins })` takes. */
export interface ApolloCostLimitPlugin<Context> {
  requestDidStart(): Promise<{
    didResolveOperation(requestContext: ApolloRequestContext<Context>): Promise<void>;
    willSendResponse(requestContext: ApolloRequestContext<Context>): Promise<void>;
  }>;
}

/**
 * Cost-based rate limiting for Apollo Server 5 (4's plugin API is the same): an operation's cost is
 * estimated from its document and variables and reserved before it executes, or it is refused without
 * executing (429, or 403 when it costs more than the budget can ever hold); after it ran, its actual
 * cost is counted from the result and settled. The response carries `extensions.cost` and the
 * rate-limit headers.
 *
 * @example
 * const server = new ApolloServer<{ userId: string }>({
 *   schema,
 *   plugins: [apolloCostLimit({ limit: 1000, window: '1m', store, key: (context) => `user:${context.userId}` })],
 * });
 */
export function apolloCostLimit<Context = Record<string, unknown>>(
  options: CostLimitOptions<Context>,
): ApolloCostLimitPlugin<Context> {
  const limit = createCostLimit(options);
  return {
    async requestDidStart() {
      let admission: Admitted | Refused | undefined;
      return {
        async didResolveOperation(requestContext) {
          const { schema, document, operationName, request, contextValue, response } = requestContext;
          if (document === undefined) return;
          admission = await limit.admit(
            { schema, document, operationName, variables: request.variables },
            contextValue,
          );
          for (const [name, value] of Object.entries(admission.headers))
            response.http.headers.set(name, value);
          if (!admission.admitted) {
            // Apollo answers an error thrown here with this status, having run nothing.
            response.http.status = admission.error.statusCode;
            throw admission.error;
          }
        },
        async willSendResponse({ response }) {
          const body = response.body;
          if (admission === undefined || body?.kind !== 'single') return; // streamed: stays charged its estimate
          const cost = admission.admitted
            ? await limit.settle(admission, body.singleResult.data)
            : admission.extension;
          body.singleResult.extensions = { ...body.singleResult.extensions, cost };
        },
      };
    },
  };
}
