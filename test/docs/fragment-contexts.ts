/**
 * The fragments' contexts, `test/docs/fragments/*.ts`: the names each offers, and the import that gives a
 * fragment the ones it uses.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Where the contexts are, relative to the repository root. */
export const FRAGMENT_CONTEXTS_DIR = 'test/docs/fragments';

/** A module of `test/docs/fragments/`: its path and the names it exports (`type` for type-only ones). */
export interface FragmentContext {
  readonly path: string;
  readonly exports: ReadonlyMap<string, { readonly typeOnly: boolean }>;
}

/** Every context, by name (its file's name: `express` for `express.ts`). */
export function fragmentContexts(root: string): Map<string, FragmentContext> {
  const dir = join(root, FRAGMENT_CONTEXTS_DIR);
  const contexts = new Map<string, FragmentContext>();
  for (const name of readdirSync(dir).filter((entry) => entry.endsWith('.ts'))) {
    const path = join(dir, name);
    contexts.set(name.replace(/\.ts$/, ''), {
      path,
      exports: exportsOf(parse(path, readFileSync(path, 'utf8'))),
    });
  }
  return contexts;
}

/**
 * The import statement that gives a fragment, a module in `dir`, the names of its context it uses and
 * does not declare or import itself; `undefined` when it uses none.
 */
export function contextImport(context: FragmentContext, code: string, dir: string): string | undefined {
  const names = namesTakenFrom(context.exports, parse(join(dir, 'fragment.ts'), code));
  if (names.length === 0) return undefined;
  const specifier = relative(dir, context.path).replace(/\.ts$/, '.js');
  return `import { ${names.join(', ')} } from '${specifier.startsWith('.') ? specifier : `./${specifier}`}';`;
}

function parse(fileName: string, text: string): ts.SourceFile {
  return ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** The names a module exports, read from its syntax (enough for the contexts, which are plain). */
function exportsOf(source: ts.SourceFile): Map<string, { typeOnly: boolean }> {
  const names = new Map<string, { typeOnly: boolean }>();
  for (const statement of source.statements) {
    if (
      ts.isExportDeclaration(statement) &&
      statement.exportClause &&
      ts.isNamedExports(statement.exportClause)
    ) {
      for (const element of statement.exportClause.elements) {
        names.set(element.name.text, { typeOnly: statement.isTypeOnly || element.isTypeOnly });
      }
      continue;
    }
    const exported = ts.canHaveModifiers(statement)
      ? ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) continue;
    const typeOnly = ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement);
    for (const name of declaredNames(statement)) names.set(name, { typeOnly });
  }
  return names;
}

/**
 * The context's names a fragment uses without declaring them itself, as import specifiers. A name the
 * snippet declares or imports is its own: the context's is not imported.
 */
function namesTakenFrom(exports: FragmentContext['exports'], snippet: ts.SourceFile): string[] {
  const own = new Set(snippet.statements.flatMap((statement) => declaredNames(statement)));
  const used = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && !isMemberName(node)) used.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(snippet);
  return [...exports]
    .filter(([name]) => used.has(name) && !own.has(name))
    .map(([name, { typeOnly }]) => (typeOnly ? `type ${name}` : name));
}

/** Whether an identifier names a member (`res.json`, `{ limit: 5 }`) rather than referring to a binding. */
function isMemberName(node: ts.Identifier): boolean {
  const { parent } = node;
  return (
    (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
    (ts.isQualifiedName(parent) && parent.right === node) ||
    ((ts.isPropertyAssignment(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isMethodSignature(parent)) &&
      parent.name === node)
  );
}

/** The names a top-level statement binds in its module: imports, variables, functions, classes, types. */
function declaredNames(statement: ts.Statement): string[] {
  if (ts.isImportDeclaration(statement)) {
    const clause = statement.importClause;
    if (clause === undefined) return [];
    const bindings = clause.namedBindings;
    return [
      ...(clause.name ? [clause.name.text] : []),
      ...(bindings === undefined
        ? []
        : ts.isNamespaceImport(bindings)
          ? [bindings.name.text]
          : bindings.elements.map((element) => element.name.text)),
    ];
  }
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.flatMap((declaration) => bindingNames(declaration.name));
  }
  if (
    (ts.isFunctionDeclaration(statement) ||
      ts.isClassDeclaration(statement) ||
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isEnumDeclaration(statement) ||
      ts.isImportEqualsDeclaration(statement) ||
      ts.isModuleDeclaration(statement)) &&
    statement.name !== undefined &&
    ts.isIdentifier(statement.name)
  ) {
    return [statement.name.text];
  }
  return [];
}

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) =>
    ts.isOmittedExpression(element) ? [] : bindingNames(element.name),
  );
}
