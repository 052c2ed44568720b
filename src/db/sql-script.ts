/**
 * Splits a SQL script into its statements, for servers that refuse several statements in one
 * query string: Citus propagates DDL on distributed tables (CREATE TRIGGER, ALTER TABLE, CREATE
 * INDEX) only from a string holding that one statement ("cannot insert multiple commands into a
 * prepared statement"). Knows what may hide a semicolon: quoted strings (with E'' escapes),
 * quoted identifiers, dollar-quoted bodies, and comments. Empty statements are dropped.
 */
export function splitStatements(script: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const n = script.length;
  const push = (end: number) => {
    const text = script.slice(start, end).trim();
    if (text && !/^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*$/.test(text)) out.push(text);
  };
  while (i < n) {
    const c = script[i];
    const next = script[i + 1];
    if (c === '-' && next === '-') {
      const end = script.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '/' && next === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (script[i] === '/' && script[i + 1] === '*') {
          depth++;
          i += 2;
        } else if (script[i] === '*' && script[i + 1] === '/') {
          depth--;
          i += 2;
        } else i++;
      }
    } else if (c === "'" || c === '"') {
      const escapes = c === "'" && /[eE]/.test(script[i - 1] ?? '') && !/[\w$]/.test(script[i - 2] ?? '');
      i++;
      while (i < n) {
        if (escapes && script[i] === '\\') i += 2;
        else if (script[i] === c && script[i + 1] === c) i += 2;
        else if (script[i] === c) break;
        else i++;
      }
      i++;
    } else if (c === '$' && !/[\w$]/.test(script[i - 1] ?? '')) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/.exec(script.slice(i, i + 64))?.[0];
      if (tag) {
        const end = script.indexOf(tag, i + tag.length);
        i = end < 0 ? n : end + tag.length;
      } else i++;
    } else if (c === ';') {
      push(i);
      start = ++i;
    } else i++;
  }
  push(n);
  return out;
}
