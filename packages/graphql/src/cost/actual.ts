/**
 * The actual cost: what an operation cost once it ran, counted from its result by the estimate's rules,
 * with the lists as long as they came back. A value that is `null` (not found, or its resolver failed)
 * costs nothing, nor does anything under it.
 */
import {
  type GraphQLCompositeType,
  type GraphQLObjectType,
  isObjectType,
  type SelectionSetNode,
} from 'graphql';
import { type CollectedField, collectFields, selectionSetsOf } from './collect.js';
import { fieldDefinition, type PreparedOperation } from './operation.js';
import type { CostRules } from './rules.js';
import type { FieldCosting, SchemaCosts } from './schema-costs.js';

/**
 * What the fields of `prepared` cost in `data`, its result's `data`, the base cost not included.
 *
 * @example
 * actualFields(costs, rules, prepared, result.data); // 12 for 3 users of 3 posts each
 */
export function actualFields(
  costs: SchemaCosts,
  rules: CostRules,
  prepared: PreparedOperation,
  data: Readonly<Record<string, unknown>>,
): number {
  const { walk } = prepared;

  function objectCost(
    type: GraphQLCompositeType,
    selectionSets: Iterable<SelectionSetNode>,
    value: Readonly<Record<string, unknown>>,
  ): number {
    const runtime = runtimeTypeOf(type, value);
    let total = 0;
    const counted = new Set<string>();
    for (const field of collectFields(walk, runtime ?? type, selectionSets, runtime).values()) {
      // Without `__typename` an abstract value's type is unknown: a key is counted once, as it came back.
      if (counted.has(field.responseKey) || !(field.responseKey in value)) continue;
      counted.add(field.responseKey);
      total += fieldCost(field, value[field.responseKey]);
    }
    return total;
  }

  function fieldCost(field: CollectedField, value: unknown): number {
    const name = field.nodes[0]?.name.value as string;
    if (name === '__typename' || value === null || value === undefined) return 0;
    if (name === '__schema' || name === '__type') return rules.objectWeight;
    const definition = fieldDefinition(field.parent, name);
    return definition === undefined
      ? 0
      : valuesCost(costs.of(definition), field, value, costs.of(definition).listDepth);
  }

  function valuesCost(costing: FieldCosting, field: CollectedField, value: unknown, depth: number): number {
    if (value === null || value === undefined) return 0;
    if (depth > 0 && Array.isArray(value)) {
      let total = 0;
      for (const item of value) total += valuesCost(costing, field, item, depth - 1);
      return total;
    }
    if (!costing.composite || typeof value !== 'object') return costing.weight;
    const type = costing.namedType as GraphQLCompositeType;
    return costing.weight + objectCost(type, selectionSetsOf(field.nodes), value as Record<string, unknown>);
  }

  /** The object type of `value`: its field's own type, else the one its `__typename` names. */
  function runtimeTypeOf(
    type: GraphQLCompositeType,
    value: Readonly<Record<string, unknown>>,
  ): GraphQLObjectType | undefined {
    if (isObjectType(type)) return type;
    const name = value.__typename;
    const named = typeof name === 'string' ? walk.schema.getType(name) : undefined;
    return isObjectType(named) && walk.schema.isSubType(type, named) ? named : undefined;
  }

  return objectCost(prepared.root, [prepared.operation.selectionSet], data);
}
