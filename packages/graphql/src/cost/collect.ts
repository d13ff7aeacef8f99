/**
 * Which fields a selection set selects, as execution collects them: `@skip` and `@include` applied,
 * fragments and inline fragments expanded, the nodes of one response key merged.
 */
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  GraphQLIncludeDirective,
  type GraphQLObjectType,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getDirectiveValues,
  isAbstractType,
  isCompositeType,
  Kind,
  type SelectionSetNode,
  typeFromAST,
} from 'graphql';

/** What a walk over one operation needs at every level. */
export interface Walk {
  readonly schema: GraphQLSchema;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** The operation's variables, coerced. */
  readonly variables: Record<string, unknown>;
}

/** The field of one response key: the type it is selected on, and every node that selects it. */
export interface CollectedField {
  readonly responseKey: string;
  readonly parent: GraphQLCompositeType;
  readonly nodes: FieldNode[];
}

/**
 * The fields `selectionSets` select on `parent`. With `runtime` (the object type of a value in a
 * result), a fragment counts when its type condition matches it, exactly as execution decides. Without
 * (an estimate, before any value exists), every fragment counts, each field under the type its fragment
 * names, so fields on different members of an interface or union are all counted.
 */
export function collectFields(
  walk: Walk,
  parent: GraphQLCompositeType,
  selectionSets: Iterable<SelectionSetNode>,
  runtime: GraphQLObjectType | undefined,
): Map<string, CollectedField> {
  const fields = new Map<string, CollectedField>();
  const visitedFragments = new Set<string>();
  const visit = (on: GraphQLCompositeType, selectionSet: SelectionSetNode): void => {
    for (const selection of selectionSet.selections) {
      if (!included(walk, selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const responseKey = selection.alias?.value ?? selection.name.value;
        // An estimate keeps apart the same key on different types (they never meet in one value).
        const key = runtime === undefined ? `${on.name}.${responseKey}` : responseKey;
        const known = fields.get(key);
        if (known === undefined) fields.set(key, { responseKey, parent: on, nodes: [selection] });
        else if (!known.nodes.includes(selection)) known.nodes.push(selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = conditionOf(walk, selection.typeCondition, on);
        if (condition !== undefined && matches(walk, condition, runtime))
          visit(condition, selection.selectionSet);
      } else {
        const name = selection.name.value;
        const fragment = walk.fragments.get(name);
        if (fragment === undefined || visitedFragments.has(name)) continue;
        visitedFragments.add(name);
        const condition = conditionOf(walk, fragment.typeCondition, on);
        if (condition !== undefined && matches(walk, condition, runtime))
          visit(condition, fragment.selectionSet);
      }
    }
  };
  for (const selectionSet of selectionSets) visit(parent, selectionSet);
  return fields;
}

function conditionOf(
  walk: Walk,
  typeCondition: Parameters<typeof typeFromAST>[1] | undefined,
  on: GraphQLCompositeType,
): GraphQLCompositeType | undefined {
  if (typeCondition === undefined) return on;
  const type = typeFromAST(walk.schema, typeCondition);
  return isCompositeType(type) ? type : undefined;
}

function matches(
  walk: Walk,
  condition: GraphQLCompositeType,
  runtime: GraphQLObjectType | undefined,
): boolean {
  if (runtime === undefined || condition === runtime) return true;
  return isAbstractType(condition) && walk.schema.isSubType(condition, runtime);
}

/** `@skip(if:)` and `@include(if:)`, with the operation's variables. */
function included(walk: Walk, node: Parameters<typeof getDirectiveValues>[1]): boolean {
  if (node.directives === undefined || node.directives.length === 0) return true;
  if (getDirectiveValues(GraphQLSkipDirective, node, walk.variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, walk.variables)?.if !== false;
}

/** The selection sets of a response key's nodes, merged as execution merges them. */
export function* selectionSetsOf(nodes: readonly FieldNode[]): Iterable<SelectionSetNode> {
  for (const node of nodes) if (node.selectionSet !== undefined) yield node.selectionSet;
}
