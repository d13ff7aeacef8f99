/**
 * The estimate: what an operation costs before it runs, from its document and variables. Each value a
 * field returns costs its weight plus what its selections cost; a list's size comes from its slicing
 * argument (`first`, `last`, `limit` or the field's `@listSize`), else its assumed size, else the
 * default list size.
 */
import type { FieldNode, GraphQLCompositeType, SelectionSetNode } from 'graphql';
import { type CollectedField, collectFields, selectionSetsOf } from './collect.js';
import { argumentsOf, fieldDefinition, type PreparedOperation } from './operation.js';
import type { CostRules } from './rules.js';
import type { FieldCosting, SchemaCosts } from './schema-costs.js';

/** Child fields whose list size a parent's slicing argument gives (a connection's `edges`, `nodes`). */
interface SizedChildren {
  readonly fields: readonly string[];
  readonly size: number;
}

/**
 * What the fields of `prepared` cost by the estimate, the base cost not included.
 *
 * @example
 * estimateFields(costs, rules, prepareOperation({ schema, document })); // 10100 for users(first: 100) { posts(first: 100) { id } }
 */
export function estimateFields(costs: SchemaCosts, rules: CostRules, prepared: PreparedOperation): number {
  const { walk } = prepared;
  // A field's cost depends only on its nodes, the type it is selected on and the size its parent gives
  // it. Fragments spread under several keys reach the same nodes by many paths (2^n for n levels that
  // each spread the next twice): each is costed once.
  const known = new Map<string, number>();

  function selectionsCost(
    parent: GraphQLCompositeType,
    selectionSets: Iterable<SelectionSetNode>,
    sized: SizedChildren | undefined,
  ): number {
    let total = 0;
    for (const field of collectFields(walk, parent, selectionSets, undefined).values()) {
      total += fieldCost(field, sized);
    }
    return total;
  }

  function fieldCost(field: CollectedField, sized: SizedChildren | undefined): number {
    const key = memoKey(field, sized);
    if (key === undefined) return costOfField(field, sized);
    let cost = known.get(key);
    if (cost === undefined) {
      cost = costOfField(field, sized);
      known.set(key, cost);
    }
    return cost;
  }

  function costOfField(field: CollectedField, sized: SizedChildren | undefined): number {
    const node = field.nodes[0] as FieldNode;
    const name = node.name.value;
    if (name === '__typename') return 0;
    // Introspection is the server's own: one object each, whatever it selects.
    if (name === '__schema' || name === '__type') return rules.objectWeight;
    const definition = fieldDefinition(field.parent, name);
    if (definition === undefined) return 0;
    const costing = costs.of(definition);
    const inherited = sized?.fields.includes(name) === true ? sized.size : undefined;
    const { size, children } = sizesOf(costing, argumentsOf(walk, definition, node));
    let count = 1;
    if (costing.listDepth > 0) {
      count = inherited ?? size;
      // Lists of lists: the arguments size the outer one.
      for (let depth = 1; depth < costing.listDepth; depth++) count *= rules.defaultListSize;
    }
    if (count === 0) return 0;
    const below = costing.composite
      ? selectionsCost(costing.namedType as GraphQLCompositeType, selectionSetsOf(field.nodes), children)
      : 0;
    return count * (costing.weight + below);
  }

  /** The field's own list size, and the size it gives its sized children (a connection's), if any. */
  function sizesOf(
    costing: FieldCosting,
    args: Record<string, unknown>,
  ): { size: number; children: SizedChildren | undefined } {
    const rule = costing.listSize;
    if (rule !== undefined) {
      const sliced = largestOf(args, rule.slicingArguments);
      const assumed = rule.assumedSize ?? rules.defaultListSize;
      if (rule.sizedFields.length > 0) {
        return { size: assumed, children: { fields: rule.sizedFields, size: sliced ?? assumed } };
      }
      return { size: sliced ?? assumed, children: undefined };
    }
    const sliced = largestOf(args, rules.listArguments);
    if (costing.listDepth > 0) return { size: sliced ?? rules.defaultListSize, children: undefined };
    // An object sliced by `first` is a connection: its `edges` and `nodes` lists have that size.
    const children = sliced === undefined ? undefined : { fields: rules.connectionFields, size: sliced };
    return { size: rules.defaultListSize, children };
  }

  return selectionsCost(prepared.root, [prepared.operation.selectionSet], undefined);
}

/**
 * What identifies a field's cost within one operation: where its nodes start in the document, the type
 * they are selected on, and the size a parent gives it; `undefined` for a document parsed without
 * locations (not cached then).
 */
function memoKey(field: CollectedField, sized: SizedChildren | undefined): string | undefined {
  let key = `${field.parent.name}|${sized === undefined ? '' : `${sized.size}:${sized.fields.join(',')}`}`;
  for (const node of field.nodes) {
    if (node.loc === undefined) return undefined;
    key += `|${node.loc.start}`;
  }
  return key;
}

/** The largest of the named arguments that were given as numbers; `undefined` when none was. */
function largestOf(args: Record<string, unknown>, names: readonly string[]): number | undefined {
  let largest: number | undefined;
  for (const name of names) {
    const value = args[name];
    if (typeof value !== 'number' || Number.isNaN(value)) continue;
    const size = Math.max(0, Math.ceil(value));
    largest = largest === undefined ? size : Math.max(largest, size);
  }
  return largest;
}
