/** One operation made ready to be costed: its root type, its fragments, its variables coerced. */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
} from 'graphql';
import type { Walk } from './collect.js';

/** What the cost of one operation is counted from. */
export interface OperationToCost {
  /** The GraphQL schema the operation runs against. */
  readonly schema: GraphQLSchema;
  /** The parsed and validated document. */
  readonly document: DocumentNode;
  /** Which operation of the document runs; `undefined` or `null` when it holds one. */
  readonly operationName?: string | null | undefined;
  /** The variables as the client sent them. */
  readonly variables?: Readonly<Record<string, unknown>> | null | undefined;
}

/** An operation ready to be walked; `undefined` fields when it cannot run (no such operation, bad variables). */
export interface PreparedOperation {
  readonly walk: Walk;
  readonly operation: OperationDefinitionNode;
  readonly root: GraphQLObjectType;
}

/**
 * The operation of `input` ready to be walked, or `undefined` when execution would not run it (no such
 * operation, no root type for it, variables that do not coerce): it then costs only the base cost.
 */
export function prepareOperation(input: OperationToCost): PreparedOperation | undefined {
  const { schema, document } = input;
  const operation = getOperationAST(document, input.operationName ?? undefined);
  if (!operation) return undefined;
  const root = schema.getRootType(operation.operation);
  if (!root) return undefined;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], {
    ...(input.variables ?? {}),
  });
  if (coerced.coerced === undefined) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return { walk: { schema, fragments, variables: coerced.coerced }, operation, root };
}

/** The definition of the field `name` on `parent`; `undefined` for a union's (only `__typename`) or an unknown one. */
export function fieldDefinition(
  parent: GraphQLCompositeType,
  name: string,
): GraphQLField<unknown, unknown> | undefined {
  if (!isObjectType(parent) && !isInterfaceType(parent)) return undefined;
  return parent.getFields()[name];
}

/** A field's arguments as execution sees them (defaults and variables applied); `{}` when they do not coerce. */
export function argumentsOf(
  walk: Walk,
  definition: GraphQLField<unknown, unknown>,
  node: FieldNode,
): Record<string, unknown> {
  if (definition.args.length === 0) return {};
  try {
    return getArgumentValues(definition, node, walk.variables);
  } catch {
    // Execution reports these as a field error and resolves nothing under the field.
    return {};
  }
}
