import { describe, expect, it } from 'vitest';
import { readMigrations } from '../../src/db/migrate.js';
import { splitStatements } from '../../src/db/sql-script.js';

/**
 * On PostgreSQL (and Citus, which needs it for DDL on distributed tables) scripts run one
 * statement per query string: the split must never cut inside a string, an identifier, a
 * dollar-quoted body or a comment.
 */
describe('splitStatements', () => {
  it('keeps semicolons inside strings, identifiers, dollar quotes and comments', () => {
    const script = `
      -- a comment; not a statement
      CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE NOTICE 'one; two';
        RETURN NEW;
      END
      $$;
      /* block; /* nested; */ still comment; */
      SELECT 'it''s; fine', E'esc\\'; aped', "odd;name" FROM t;
      DO $body$ BEGIN PERFORM 1; PERFORM $$;$$; END $body$;
      SELECT $1::text, x$y FROM t2;
      ;;
      -- trailing comment only`;
    expect(splitStatements(script)).toEqual([
      expect.stringMatching(/^-- a comment; not a statement\s+CREATE FUNCTION f\(\)[\s\S]*RAISE NOTICE 'one; two';[\s\S]*END\s+\$\$$/),
      expect.stringMatching(/^\/\* block; \/\* nested; \*\/ still comment; \*\/\s+SELECT 'it''s; fine', E'esc\\'; aped', "odd;name" FROM t$/),
      'DO $body$ BEGIN PERFORM 1; PERFORM $$;$$; END $body$',
      'SELECT $1::text, x$y FROM t2',
    ]);
  });

  it('splits every migration into statements that each end where the file has a semicolon', async () => {
    for (const m of await readMigrations()) {
      const statements = splitStatements(m.sql);
      expect(statements.length, m.name).toBeGreaterThan(0);
      for (const s of statements) {
        expect(s.endsWith(';'), `${m.name}: ${s.slice(0, 60)}`).toBe(false);
        expect(m.sql.includes(s), m.name).toBe(true);
      }
      // Nothing is lost: the statements are the file minus comments, blanks and separators.
      const squash = (x: string) => x.replace(/--[^\n]*/g, '').replace(/[\s;]/g, '');
      expect(squash(statements.join(';')), m.name).toBe(squash(m.sql));
    }
  });
});
