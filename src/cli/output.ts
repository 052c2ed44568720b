/**
 * One output shape per command (docs/decisions.md, "Issue 54"): a sentence for people by default,
 * one JSON document with `--json` for scripts. A secret printed once goes alone to stdout either
 * way (inside the JSON with `--json`), its sentence to stderr.
 */
export const JSON_HELP = 'print one JSON document instead of sentences (for scripts)';

export function say(opts: { json?: boolean }, sentence: string, value: unknown): void {
  console.log(opts.json ? JSON.stringify(value) : sentence);
}
