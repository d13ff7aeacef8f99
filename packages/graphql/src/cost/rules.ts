/** The cost rules, the types: what a field, a list and an operation cost when the schema does not say. */

/** How costs are counted, resolved from the options (see `CostOptions` for each one's meaning and default). */
export interface CostRules {
  readonly baseCost: number;
  readonly objectWeight: number;
  readonly scalarWeight: number;
  readonly defaultListSize: number;
  readonly listArguments: readonly string[];
  readonly connectionFields: readonly string[];
}

/** The rules when no option changes them. */
export const DEFAULT_COST_RULES: CostRules = Object.freeze({
  baseCost: 1,
  objectWeight: 1,
  scalarWeight: 0,
  defaultListSize: 10,
  listArguments: Object.freeze(['first', 'last', 'limit']),
  connectionFields: Object.freeze(['edges', 'nodes']),
});

/**
 * The largest cost counted: past it a sum is no longer exact in a double, and no bucket holds that many
 * tokens anyway, so the operation is refused as costing more than any capacity.
 */
export const MAX_COST = Number.MAX_SAFE_INTEGER;

/** `cost`, capped at {@link MAX_COST} (an `Infinity` from a runaway product included). */
export function capped(cost: number): number {
  return cost > MAX_COST || Number.isNaN(cost) ? MAX_COST : cost;
}
