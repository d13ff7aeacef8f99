/**
 * Indents generated Lua by its blocks, two spaces a level, as one would write it: the generator splices
 * the algorithms' bodies into its templates, and this gives the result one indentation throughout.
 * Only the whitespace at the start of a line changes (Lua reads none of it), so the script runs exactly
 * as before. It knows the Lua the generator writes: no long strings or block comments.
 */

/** Words and brackets that open a level, and those that close one. */
const OPENERS = new Set(['function', 'then', 'do', 'repeat', '{', '(']);
const CLOSERS = new Set(['end', 'until', '}', ')']);
/** Words that close the level above them for their own line, and open it again after. */
const MIDDLES = new Set(['else', 'elseif']);

/** A line's code without its comment and the contents of its strings (which may hold any word). */
function codeOf(line: string): string {
  let code = '';
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) {
        quote = undefined;
        code += c;
      }
      continue;
    }
    if (c === '-' && line[i + 1] === '-') break;
    if (c === "'" || c === '"') quote = c;
    code += c;
  }
  return code;
}

/** A line's words and brackets, in order. */
function tokensOf(line: string): string[] {
  return codeOf(line).match(/[A-Za-z_][A-Za-z0-9_]*|[{}()]/g) ?? [];
}

/** `lua` with every line indented by its depth in blocks (a continued expression one level more). */
export function indentLua(lua: string): string {
  let depth = 0;
  // A condition spread over lines (`if` … `then` on a later line): its lines one level in.
  let pendingCondition = false;
  return lua
    .split('\n')
    .map((raw) => {
      const text = raw.trim();
      if (text === '') return '';
      const tokens = tokensOf(text);
      let leading = 0;
      for (const token of tokens) {
        if (CLOSERS.has(token) || MIDDLES.has(token)) leading++;
        else break;
        if (MIDDLES.has(token)) break;
      }
      const continued = /^(or|and)\b|^\.\./.test(text) || (pendingCondition && !/^--/.test(text));
      const level = Math.max(0, depth - leading) + (continued ? 1 : 0);
      for (const token of tokens) {
        // `elseif … then` stays at its level (`then` opens it again); `else` closes it and opens it.
        if (OPENERS.has(token)) depth++;
        else if (CLOSERS.has(token) || token === 'elseif') depth--;
      }
      const opensCondition = tokens.some((t) => t === 'if' || t === 'elseif' || t === 'while');
      const closesCondition = tokens.some((t) => t === 'then' || t === 'do');
      if (opensCondition && !closesCondition) pendingCondition = true;
      else if (closesCondition) pendingCondition = false;
      return '  '.repeat(level) + text;
    })
    .join('\n');
}
