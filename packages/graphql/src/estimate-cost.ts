/** `estimateCost`: an operation's estimated cost on its own, to show it, log it or test a schema's weights. */
import { costModel } from './cost/cost-model.js';
import type { OperationToCost } from './cost/operation.js';
import { type CostOptions, resolveCostRules } from './options.js';

/**
 * What `operation` costs by the estimate the limit reserves (the base cost included), under the cost
 * options given (defaults otherwise). The document should be valid for the schema: the servers call it
 * after validation.
 *
 * @example
 * estimateCost({ schema, document: parse('{ users(first: 100) { posts(first: 100) { id } } }') }); // 10101
 */
export function estimateCost(operation: OperationToCost, options: CostOptions = {}): number {
  return costModel(resolveCostRules(options)).estimate(operation).cost;
}
