/** The cost model: the estimate before an operation runs, the actual cost after, under one set of rules. */
import { actualFields } from './actual.js';
import { estimateFields } from './estimate.js';
import { type OperationToCost, type PreparedOperation, prepareOperation } from './operation.js';
import { type CostRules, capped } from './rules.js';
import { SchemaCosts } from './schema-costs.js';

/** An operation's estimate, and what its actual cost is counted from once it has run. */
export interface Estimate {
  /** What the operation costs by its document and variables, the base cost included. */
  readonly cost: number;
  /** The operation, ready to be walked again over its result; `undefined` when it cannot run. */
  readonly prepared: PreparedOperation | undefined;
}

/** Counts costs under one set of rules, caching what the schema says of each field. */
export interface CostModel {
  estimate(operation: OperationToCost): Estimate;
  /** The actual cost of an estimated operation, from its result's `data`, the base cost included. */
  actual(estimate: Estimate, data: unknown): number;
}

/**
 * A cost model of `rules`.
 *
 * @example
 * const model = costModel(rules);
 * const estimate = model.estimate({ schema, document, variables });
 * model.actual(estimate, result.data);
 */
export function costModel(rules: CostRules): CostModel {
  const costs = new SchemaCosts(rules);
  return {
    estimate(operation) {
      const prepared = prepareOperation(operation);
      const fields = prepared === undefined ? 0 : estimateFields(costs, rules, prepared);
      return { cost: capped(rules.baseCost + fields), prepared };
    },
    actual({ prepared }, data) {
      if (prepared === undefined || typeof data !== 'object' || data === null) return rules.baseCost;
      return capped(rules.baseCost + actualFields(costs, rules, prepared, data as Record<string, unknown>));
    },
  };
}
