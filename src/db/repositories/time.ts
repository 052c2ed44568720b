/** Renders a database timestamp the one way the API shows time: ISO 8601, UTC, milliseconds. */
export const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));
/** A `date` column as YYYY-MM-DD. pg and PGlite return it as a Date at UTC midnight or a string. */
export const day = (d: Date | string): string => (d instanceof Date ? d.toISOString().slice(0, 10) : String(d).slice(0, 10));

/**
 * An instant as PostgreSQL reads it. JavaScript writes years past 9999 as '+010000-...', which
 * PostgreSQL refuses; the day after 9999-12-31 (the exclusive end of a comments range) is one.
 */
export const pgIso = (d: Date) => d.toISOString().replace(/^\+0*(\d{5,})/, '$1');
