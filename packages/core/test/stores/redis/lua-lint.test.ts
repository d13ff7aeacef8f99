/**
 * Lints every script Redis runs, as committed in `lua/`: each parses as Lua 5.1 (Redis's), reads no
 * global but Redis's and the standard library's (a misspelt local would be a nil global, an error only
 * at run time, and only on the path that reads it), writes no global (Redis refuses it), and reads every
 * local it declares (a value computed and never used is work Redis does for nothing).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import luaparse from 'luaparse';
import { describe, expect, it } from 'vitest';
import { LUA_DIR } from '../../../src/stores/redis/script/lua-files.js';

const luaDir = fileURLToPath(new URL(`../../../${LUA_DIR}`, import.meta.url));

/** What a script may read without declaring it. */
const GLOBALS = new Set([
  'ARGV',
  'KEYS',
  'redis',
  'math',
  'string',
  'table',
  'tonumber',
  'tostring',
  'type',
  'pairs',
  'ipairs',
  'unpack',
  'select',
  'error',
]);

type Node = { type: string; [field: string]: unknown };

interface Local {
  readonly name: string;
  readonly line: number;
  read: boolean;
}

/** What is wrong with a script, one line per finding. */
function lint(source: string): string[] {
  const findings: string[] = [];
  const scopes: Local[][] = [];
  const lineOf = (node: Node) => (node.loc as { start: { line: number } } | undefined)?.start.line ?? 0;
  const open = () => scopes.push([]);
  const close = () => {
    for (const local of scopes.pop() ?? []) {
      if (!local.read && !local.name.startsWith('_')) {
        findings.push(`line ${local.line}: local '${local.name}' is never read`);
      }
    }
  };
  const declare = (identifier: Node, param = false) => {
    // A parameter may go unread: every algorithm's step takes the same arguments.
    scopes.at(-1)?.push({ name: identifier.name as string, line: lineOf(identifier), read: param });
  };
  const resolve = (name: string): Local | undefined => {
    for (let i = scopes.length - 1; i >= 0; i--) {
      const scope = scopes[i] ?? [];
      for (let j = scope.length - 1; j >= 0; j--) if (scope[j]?.name === name) return scope[j];
    }
    return undefined;
  };
  const read = (node: Node) => {
    const local = resolve(node.name as string);
    if (local) local.read = true;
    else if (!GLOBALS.has(node.name as string)) {
      findings.push(`line ${lineOf(node)}: reads the global '${node.name}'`);
    }
  };
  const assign = (target: Node) => {
    if (target.type === 'Identifier') {
      if (!resolve(target.name as string))
        findings.push(`line ${lineOf(target)}: writes the global '${target.name}'`);
    } else expression(target);
  };
  const block = (body: unknown, before?: () => void) => {
    open();
    before?.();
    for (const statement of body as Node[]) visit(statement);
    close();
  };
  const expression = (node: Node | null | undefined): void => {
    if (!node) return;
    switch (node.type) {
      case 'Identifier':
        read(node);
        return;
      case 'MemberExpression':
        expression(node.base as Node); // `.identifier` is a field's name
        return;
      case 'FunctionDeclaration':
        visit(node);
        return;
      case 'TableConstructorExpression':
        for (const field of node.fields as Node[]) {
          if (field.type === 'TableKey') expression(field.key as Node);
          expression(field.value as Node);
        }
        return;
      default:
        for (const [key, value] of Object.entries(node)) {
          if (key === 'loc' || key === 'range') continue;
          if (Array.isArray(value)) for (const item of value) isNode(item) && expression(item);
          else if (isNode(value)) expression(value);
        }
    }
  };
  const visit = (node: Node): void => {
    switch (node.type) {
      case 'LocalStatement':
        for (const init of node.init as Node[]) expression(init);
        for (const variable of node.variables as Node[]) declare(variable);
        return;
      case 'AssignmentStatement':
        for (const init of node.init as Node[]) expression(init);
        for (const variable of node.variables as Node[]) assign(variable);
        return;
      case 'FunctionDeclaration': {
        const name = node.identifier as Node | null;
        if (name && node.isLocal) declare(name);
        else if (name) assign(name);
        block(node.body, () => {
          for (const param of node.parameters as Node[])
            if (param.type === 'Identifier') declare(param, true);
        });
        return;
      }
      case 'IfStatement':
        for (const clause of node.clauses as Node[]) {
          expression(clause.condition as Node | undefined);
          block(clause.body);
        }
        return;
      case 'WhileStatement':
        expression(node.condition as Node);
        block(node.body);
        return;
      case 'DoStatement':
        block(node.body);
        return;
      case 'RepeatStatement':
        // `until` sees the body's locals.
        open();
        for (const statement of node.body as Node[]) visit(statement);
        expression(node.condition as Node);
        close();
        return;
      case 'ForNumericStatement':
        expression(node.start as Node);
        expression(node.end as Node);
        expression(node.step as Node | null);
        block(node.body, () => declare(node.variable as Node, true));
        return;
      case 'ForGenericStatement':
        for (const iterator of node.iterators as Node[]) expression(iterator);
        block(node.body, () => {
          for (const variable of node.variables as Node[]) declare(variable, true);
        });
        return;
      default:
        expression(node);
    }
  };
  const chunk = luaparse.parse(source, { luaVersion: '5.1', locations: true, comments: false });
  block(chunk.body);
  return findings;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
}

describe('the Lua of the scripts Redis runs', () => {
  const files = readdirSync(luaDir).filter((name) => name.endsWith('.lua'));

  it('is committed, one file per script', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  it.each(files)('%s parses as Lua 5.1, reads and writes no stray global, reads every local', (name) => {
    expect(lint(readFileSync(`${luaDir}/${name}`, 'utf8'))).toEqual([]);
  });

  it('finds what it looks for', () => {
    expect(lint('local a, b = 1, 2\nreturn a')).toEqual(["line 1: local 'b' is never read"]);
    expect(lint('local count = 1\nreturn cuont')).toEqual([
      "line 2: reads the global 'cuont'",
      "line 1: local 'count' is never read",
    ]);
    expect(lint('total = 1')).toEqual(["line 1: writes the global 'total'"]);
    expect(() => lint('if x then')).toThrow();
  });
});
