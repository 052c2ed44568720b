/** Renders a database timestamp the one way the API shows time: ISO 8601, UTC, milliseconds. */
export const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));
/** A `date` column as YYYY-MM-DD. pg and PGlite return it as a Date at UTC midnight or a string. */
export const day = (d: Date | string): string => (d instanceof Date ? d.toISOString().slice(0, 10) : String(d).slice(0, 10));
