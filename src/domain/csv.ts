/**
 * CSV that a spreadsheet opens as text (RFC 4180 quoting, and no cell read as a formula).
 *
 * A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is one a spreadsheet may
 * run as a formula (OWASP's "CSV injection"): it gets a leading apostrophe, which the spreadsheet
 * shows as text and does not keep. A cell holding a quote, a comma or a line break is quoted, its
 * quotes doubled. The rule of the check-in links' file (`src/domain/checkins/rounds.ts`), with the
 * carriage return added to the characters that start a formula.
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  const v = value === null || value === undefined ? '' : String(value);
  const guarded = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\n\r]/.test(guarded) || guarded !== v ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** One CSV record: the cells, each through csvCell, and CRLF (RFC 4180). */
export const csvLine = (cells: readonly (string | number | boolean | null | undefined)[]): string => `${cells.map(csvCell).join(',')}\r\n`;
