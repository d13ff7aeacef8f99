/**
 * What the schema says things cost: the `@cost(weight:)` and `@listSize(...)` directives of the IBM
 * GraphQL cost specification, read from a field's or type's SDL (or its `extensions`, for schemas built
 * in code), once per field and cached.
 */
import {
  type ConstDirectiveNode,
  type ConstValueNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLOutputType,
  getNamedType,
  isCompositeType,
  isListType,
  isNonNullType,
  Kind,
} from 'graphql';
import type { CostRules } from './rules.js';

/**
 * The directives' definitions, to add to a schema's type definitions so that its SDL may use them.
 *
 * @example
 * const schema = createSchema({ typeDefs: [costDirectives, typeDefs], resolvers });
 */
export const costDirectives = `directive @cost(weight: Int!) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION | SCALAR | ENUM
directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
`;

/** A field's `@listSize`, as written. */
export interface ListSizeRule {
  readonly assumedSize: number | undefined;
  readonly slicingArguments: readonly string[];
  readonly sizedFields: readonly string[];
}

/** What one field costs, as far as the schema says: read once per field. */
export interface FieldCosting {
  /** What each value the field returns costs: its `@cost`, else its type's, else the rules' default. */
  readonly weight: number;
  /** How many lists wrap the field's type: 0 for `User`, 1 for `[User!]!`, 2 for `[[User]]`. */
  readonly listDepth: number;
  /** The type under the lists and non-nulls. */
  readonly namedType: GraphQLNamedType;
  /** Whether values have selections (an object, interface or union). */
  readonly composite: boolean;
  readonly listSize: ListSizeRule | undefined;
}

/** Has directives in SDL, or `extensions` set in code. */
interface Described {
  readonly astNode?: { readonly directives?: readonly ConstDirectiveNode[] | undefined } | null | undefined;
  readonly extensionASTNodes?: readonly { readonly directives?: readonly ConstDirectiveNode[] | undefined }[];
  readonly extensions?: unknown;
}

/**
 * Reads and caches what each field costs, under one set of rules.
 *
 * @example
 * const costs = new SchemaCosts(rules);
 * costs.of(schema.getQueryType().getFields().users).weight; // 1
 */
export class SchemaCosts {
  readonly #rules: CostRules;
  readonly #fields = new WeakMap<GraphQLField<unknown, unknown>, FieldCosting>();

  constructor(rules: CostRules) {
    this.#rules = rules;
  }

  /** The costing of `field`, read on first use. */
  of(field: GraphQLField<unknown, unknown>): FieldCosting {
    let costing = this.#fields.get(field);
    if (costing === undefined) {
      costing = this.#read(field);
      this.#fields.set(field, costing);
    }
    return costing;
  }

  #read(field: GraphQLField<unknown, unknown>): FieldCosting {
    const namedType = getNamedType(field.type);
    const composite = isCompositeType(namedType);
    const weight =
      weightOf(field) ??
      weightOf(namedType) ??
      (composite ? this.#rules.objectWeight : this.#rules.scalarWeight);
    return { weight, listDepth: listDepthOf(field.type), namedType, composite, listSize: listSizeOf(field) };
  }
}

function listDepthOf(type: GraphQLOutputType): number {
  let depth = 0;
  let inner: GraphQLOutputType = type;
  for (;;) {
    if (isNonNullType(inner)) inner = inner.ofType;
    else if (isListType(inner)) {
      depth++;
      inner = inner.ofType;
    } else return depth;
  }
}

/** `@cost(weight:)`, or `extensions.cost.weight`; `undefined` when neither is there. */
function weightOf(thing: Described): number | undefined {
  const given = extensionOf(thing, 'cost');
  if (given !== undefined) return numberOf(given.weight);
  const directive = directiveOf(thing, 'cost');
  const weight = directive?.arguments?.find((argument) => argument.name.value === 'weight');
  return weight === undefined ? undefined : numberOf(literalOf(weight.value));
}

function listSizeOf(field: Described): ListSizeRule | undefined {
  let given = extensionOf(field, 'listSize');
  if (given === undefined) {
    const directive = directiveOf(field, 'listSize');
    if (directive === undefined) return undefined;
    given = {};
    for (const argument of directive.arguments ?? []) given[argument.name.value] = literalOf(argument.value);
  }
  return {
    assumedSize: numberOf(given.assumedSize),
    slicingArguments: namesOf(given.slicingArguments),
    sizedFields: namesOf(given.sizedFields),
  };
}

function extensionOf(thing: Described, name: string): Record<string, unknown> | undefined {
  const extensions = thing.extensions as Record<string, unknown> | null | undefined;
  const value = extensions?.[name];
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function directiveOf(thing: Described, name: string): ConstDirectiveNode | undefined {
  const found = thing.astNode?.directives?.find((directive) => directive.name.value === name);
  if (found !== undefined) return found;
  for (const extension of thing.extensionASTNodes ?? []) {
    const inExtension = extension.directives?.find((directive) => directive.name.value === name);
    if (inExtension !== undefined) return inExtension;
  }
  return undefined;
}

/** A directive argument's value as plain data: numbers from Int, Float or a numeric String, as the spec allows. */
function literalOf(node: ConstValueNode): unknown {
  switch (node.kind) {
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.STRING:
      return node.value;
    case Kind.BOOLEAN:
      return node.value;
    case Kind.LIST:
      return node.values.map(literalOf);
    default:
      return undefined;
  }
}

function numberOf(value: unknown): number | undefined {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number >= 0 ? number : undefined;
}

function namesOf(value: unknown): readonly string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
}
