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
import { collectFields, selectionSetsOf } from './collect.js';
import { fieldDefinition, type PreparedOperation } from './operation.js';
import type { CostRules } from './rules.js';
import type { FieldCosting, SchemaCosts } from './schema-costs.js';

/**
 * A selected field as the walk over a result needs it, made once per selection and object type: every
 * item of a list shares its parent's, so a long list costs a lookup per value, not a collection.
 */
interface ResultField {
  readonly responseKey: string;
  /** What a value costs; `undefined` for `__typename`, `'introspection'` for `__schema` and `__type`. */
  readonly costing: FieldCosting | 'introspection' | undefined;
  readonly selectionSets: readonly SelectionSetNode[];
  /** The fields under it, by the object type of a value (or its field's type when that is unknown). */
  readonly below: Map<GraphQLCompositeType, readonly ResultField[]>;
}

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

  /** The fields `parent`'s selections select on a value of `type` (`runtime` when it is known). */
  function fieldsBelow(
    parent: ResultField,
    type: GraphQLCompositeType,
    runtime: GraphQLObjectType | undefined,
  ): readonly ResultField[] {
    const key = runtime ?? type;
    let fields = parent.below.get(key);
    if (fields !== undefined) return fields;
    const byKey = new Map<string, ResultField>();
    for (const field of collectFields(walk, key, parent.selectionSets, runtime).values()) {
      // Without `__typename` an abstract value's type is unknown: a key is counted once, as it came back.
      if (byKey.has(field.responseKey)) continue;
      const name = field.nodes[0]?.name.value as string;
      const definition = fieldDefinition(field.parent, name);
      byKey.set(field.responseKey, {
        responseKey: field.responseKey,
        costing:
          name === '__schema' || name === '__type'
            ? 'introspection'
            : definition === undefined
              ? undefined
              : costs.of(definition),
        selectionSets: [...selectionSetsOf(field.nodes)],
        below: new Map(),
      });
    }
    fields = [...byKey.values()];
    parent.below.set(key, fields);
    return fields;
  }

  function objectCost(
    parent: ResultField,
    type: GraphQLCompositeType,
    value: Readonly<Record<string, unknown>>,
  ): number {
    let total = 0;
    for (const field of fieldsBelow(parent, type, runtimeTypeOf(type, value))) {
      const fieldValue = value[field.responseKey];
      if (fieldValue === null || fieldValue === undefined || field.costing === undefined) continue;
      total +=
        field.costing === 'introspection'
          ? rules.objectWeight
          : valuesCost(field, field.costing, fieldValue, field.costing.listDepth);
    }
    return total;
  }

  function valuesCost(field: ResultField, costing: FieldCosting, value: unknown, depth: number): number {
    if (value === null || value === undefined) return 0;
    if (depth > 0 && Array.isArray(value)) {
      let total = 0;
      for (const item of value) total += valuesCost(field, costing, item, depth - 1);
      return total;
    }
    if (!costing.composite || typeof value !== 'object') return costing.weight;
    const type = costing.namedType as GraphQLCompositeType;
    return costing.weight + objectCost(field, type, value as Record<string, unknown>);
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

  const root: ResultField = {
    responseKey: '',
    costing: undefined,
    selectionSets: [prepared.operation.selectionSet],
    below: new Map(),
  };
  return objectCost(root, prepared.root, data);
}
