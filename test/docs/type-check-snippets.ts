/**
 * Type-checks the docs' TypeScript snippets against the workspace's real packages, in two TypeScript
 * Programs (NestJS's apart): each snippet is a module of its own, and a fragment imports what it uses from
 * its context.
 */
import { join, relative } from 'node:path';
import ts from 'typescript';
import {
  contextImport,
  FRAGMENT_CONTEXTS_DIR,
  type FragmentContext,
  fragmentContexts,
} from './fragment-contexts.js';
import {
  APP_LIBRARY_AUGMENTATIONS,
  INSTALLED_ELSEWHERE,
  UNINSTALLED_MODULES,
} from './snippet-environment.js';

/** A ```ts block to check, and where it sits in its Markdown file. */
export interface Snippet {
  /** The Markdown file, relative to the repository root. */
  readonly file: string;
  /** The line of the block's opening fence, 1-based. */
  readonly line: number;
  readonly code: string;
  /** The columns of indentation the block's lines had in the file (a block inside a list item). */
  readonly indent: number;
  /** For a fragment: the context it may take undeclared names from, a module of `test/docs/fragments/`. */
  readonly context?: string;
}

/** A problem with a snippet, or with the Program around the snippets: `text` says where and what. */
export interface SnippetProblem {
  /** The Markdown file (or the fragment context) it is in, relative to the repository root; `''` for none. */
  readonly file: string;
  /** `file:line:column TS1234: message`. */
  readonly text: string;
}

/** Where the snippets' modules are, in memory: in `test/`, so their imports resolve from `test/node_modules`. */
const SNIPPETS_DIR = 'test/docs/snippets';

/** A snippet as a module of the Program: its text (a fragment's context import appended) and its lines. */
interface SnippetModule {
  readonly snippet: Snippet;
  readonly text: string;
  /** The snippet's own lines: a diagnostic past them is in the appended import. */
  readonly codeLines: number;
}

/**
 * Whether a snippet is checked apart from the others, in a Program of its own. Each adapter declares its
 * request property for every program it is in (`req.rateLimit` on Express's `Request`, by
 * `@tollgate/express`), so in one Program every snippet would see every adapter's. A Nest app uses
 * Express's or Fastify's types without those adapters, and so do NestJS's snippets, apart.
 */
function isNestSnippet(snippet: Snippet): boolean {
  return snippet.context === 'nestjs' || snippet.code.includes("from '@tollgate/nestjs'");
}

/**
 * Type-checks every snippet as its own module, strict as `test/tsconfig.json`: the NestJS snippets in one
 * Program with the NestJS context, the others in another with the other contexts.
 */
export function typeCheckSnippets(root: string, snippets: readonly Snippet[]): SnippetProblem[] {
  const contexts = [...fragmentContexts(root)];
  const nest = new Map(contexts.filter(([name]) => name === 'nestjs'));
  const others = new Map(contexts.filter(([name]) => name !== 'nestjs'));
  const parsed = new Map<string, ts.SourceFile>(); // the files both Programs read, parsed once
  return [
    ...checkInOneProgram(
      root,
      snippets.filter((snippet) => !isNestSnippet(snippet)),
      others,
      parsed,
    ),
    ...checkInOneProgram(root, snippets.filter(isNestSnippet), nest, parsed),
  ];
}

/** Type-checks snippets, and the contexts they may use, in one Program. */
function checkInOneProgram(
  root: string,
  snippets: readonly Snippet[],
  contexts: ReadonlyMap<string, FragmentContext>,
  parsed: Map<string, ts.SourceFile>,
): SnippetProblem[] {
  const problems: SnippetProblem[] = [];
  const modules = snippetModules(root, snippets, contexts, problems);
  const uninstalled = join(root, SNIPPETS_DIR, 'uninstalled-modules.d.ts');
  const augmentations = join(root, SNIPPETS_DIR, 'app-library-augmentations.ts');
  const inMemory = new Map<string, string>([...modules].map(([name, { text }]) => [name, text]));
  inMemory.set(uninstalled, UNINSTALLED_MODULES);
  inMemory.set(augmentations, APP_LIBRARY_AUGMENTATIONS);
  const contextPaths = [...contexts.values()].map((context) => context.path);
  const options = compilerOptions(root);
  const program = ts.createProgram({
    rootNames: [...modules.keys(), uninstalled, augmentations, ...contextPaths],
    options,
    host: compilerHost(root, options, inMemory, parsed),
  });

  for (const diagnostic of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]) {
    problems.push({ file: '', text: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n') });
  }
  for (const sourceFile of program.getSourceFiles()) {
    const module = modules.get(sourceFile.fileName);
    if (module === undefined && !contextPaths.includes(sourceFile.fileName)) continue;
    for (const diagnostic of [
      ...program.getSyntacticDiagnostics(sourceFile),
      ...program.getSemanticDiagnostics(sourceFile),
    ]) {
      problems.push(problemAt(root, sourceFile, module, diagnostic));
    }
  }
  return problems;
}

/** Each snippet's module, by file name; a fragment whose context is missing or unused is a problem. */
function snippetModules(
  root: string,
  snippets: readonly Snippet[],
  contexts: ReadonlyMap<string, FragmentContext>,
  problems: SnippetProblem[],
): Map<string, SnippetModule> {
  const dir = join(root, SNIPPETS_DIR);
  const modules = new Map<string, SnippetModule>();
  for (const snippet of snippets) {
    const { file, line, code, context: name } = snippet;
    const where = `${file}:${line}`;
    let text = code;
    if (name !== undefined) {
      const context = contexts.get(name);
      const taken = context && contextImport(context, code, dir);
      if (context === undefined) {
        problems.push({ file, text: `${where} no fragment context '${name}' in ${FRAGMENT_CONTEXTS_DIR}` });
      } else if (taken === undefined) {
        problems.push({
          file,
          text: `${where} uses nothing of the context '${name}': drop its fragment marker`,
        });
      } else {
        // Appended, so the snippet's lines keep their numbers: imports are hoisted anyway.
        text += `\n${taken}\n`;
      }
    }
    const codeLines = code.split('\n').length;
    modules.set(join(dir, `${file.replaceAll('/', '--')}-${line}.ts`), { snippet, text, codeLines });
  }
  return modules;
}

/** A diagnostic as a problem at its place in the Markdown file (or in a context). */
function problemAt(
  root: string,
  sourceFile: ts.SourceFile,
  module: SnippetModule | undefined,
  diagnostic: ts.Diagnostic,
): SnippetProblem {
  const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ')}`;
  const at = sourceFile.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
  if (module === undefined) {
    const file = relative(root, sourceFile.fileName);
    return { file, text: `${file}:${at.line + 1}:${at.character + 1} ${message}` };
  }
  const { file, line, indent } = module.snippet;
  if (at.line >= module.codeLines) return { file, text: `${file}:${line} (its context's import) ${message}` };
  return { file, text: `${file}:${line + 1 + at.line}:${at.character + 1 + indent} ${message}` };
}

/** `test/tsconfig.json`'s options (strict, decorators as Nest needs them), every file a module. */
function compilerOptions(root: string): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'test/tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic(diagnostic) {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (parsed === undefined) throw new Error('test/tsconfig.json: unreadable');
  // A snippet without imports is still a module: its names are its own, and it may use top-level await.
  return { ...parsed.options, noEmit: true, moduleDetection: ts.ModuleDetectionKind.Force };
}

/**
 * The file system, plus the snippets' in-memory modules; `INSTALLED_ELSEWHERE` for their imports. Files
 * on disk are parsed once for every Program (`parsed`).
 */
function compilerHost(
  root: string,
  options: ts.CompilerOptions,
  inMemory: ReadonlyMap<string, string>,
  parsed: Map<string, ts.SourceFile>,
): ts.CompilerHost {
  const host = ts.createCompilerHost(options, true);
  const cache = ts.createModuleResolutionCache(
    host.getCurrentDirectory(),
    host.getCanonicalFileName,
    options,
  );
  const { fileExists, readFile, getSourceFile } = host;
  // The host's getSourceFile reads through readFile, and parses with the Program's module detection.
  return Object.assign(host, {
    getSourceFile(fileName: string, ...rest: [ts.ScriptTarget | ts.CreateSourceFileOptions]) {
      if (inMemory.has(fileName)) return getSourceFile.call(host, fileName, ...rest);
      let source = parsed.get(fileName);
      if (source === undefined) {
        source = getSourceFile.call(host, fileName, ...rest);
        if (source !== undefined) parsed.set(fileName, source);
      }
      return source;
    },
    fileExists: (fileName: string) => inMemory.has(fileName) || fileExists.call(host, fileName),
    readFile: (fileName: string) => inMemory.get(fileName) ?? readFile.call(host, fileName),
    resolveModuleNameLiterals(
      literals: readonly ts.StringLiteralLike[],
      containingFile: string,
      redirectedReference: ts.ResolvedProjectReference | undefined,
      compilerOptions: ts.CompilerOptions,
    ): ts.ResolvedModuleWithFailedLookupLocations[] {
      return literals.map(({ text }) => {
        const elsewhere = inMemory.has(containingFile) ? INSTALLED_ELSEWHERE[text] : undefined;
        const [name, from] = elsewhere
          ? [elsewhere.as, join(root, elsewhere.from, 'index.ts')]
          : [text, containingFile];
        return ts.resolveModuleName(name, from, compilerOptions, host, cache, redirectedReference);
      });
    },
  });
}
