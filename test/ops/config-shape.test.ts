import { describe, expect, expectTypeOf, it } from 'vitest';
import { EnvSchema, VARIABLES, loadConfig, type Config } from '../../src/config.js';

// src/config.ts computes `Config`, its type and its value, from one table (issue 31): these tests
// fail when the table, EnvSchema and what loadConfig returns disagree.

/** Each entry of the table, as the test reads it. */
const table: Record<string, { env: string; group?: string }> = VARIABLES;
/** Where a variable lands in a Config: `field`, or `group.field`. */
const pathOf = (field: string) => (table[field].group ? `${table[field].group}.${field}` : field);
/** Every field of a Config as `field` or `group.field` (a group is a plain object, an array is a value). */
function leaves(config: object): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const [key, value] of Object.entries(config)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, v] of Object.entries(value)) found.set(`${key}.${inner}`, v);
    } else {
      found.set(key, value);
    }
  }
  return found;
}
const schemas = EnvSchema.properties as Record<string, { default?: unknown }>;
const required = new Set<string>(EnvSchema.required);

describe('Config is computed from one table (issue 31)', () => {
  it('EnvSchema holds exactly the variables of the table, each once, in its order', () => {
    const names = Object.values(table).map((v) => v.env);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(EnvSchema.properties)).toEqual(names);
  });

  it('every variable maps to one Config field, and every Config field comes from one variable', () => {
    const fields = [...leaves(loadConfig({})).keys()].sort();
    expect(fields).toEqual(Object.keys(table).map(pathOf).sort());
  });

  it('loadConfig({}) gives every required field its default, the same value as the default written out; optional fields stay unset', () => {
    const unset = leaves(loadConfig({}));
    for (const [field, { env }] of Object.entries(table)) {
      const path = pathOf(field);
      if (required.has(env)) {
        expect(schemas[env].default, `${env} is required and has no default`).toBeDefined();
        expect(unset.get(path), path).toBeDefined();
        const written = leaves(loadConfig({ [env]: String(schemas[env].default) }));
        expect(unset.get(path), path).toEqual(written.get(path));
      } else {
        expect(unset.get(path), path).toBeUndefined();
      }
    }
  });

  it('a few fields, with their defaults and transforms', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      logLevel: 'info',
      webhookAllowPrivate: false,
      webhookRetryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      alertThresholds: { moodDrop: 50, lowMood: 250, participationDrop: 50 },
    });
    const set = loadConfig({ TRUST_PROXY: '10.0.0.7, fd00::/8', WEBHOOK_ALLOW_PRIVATE: 'true', ALERTS_LOW_MOOD: '3.25', METRICS_PORT: '9100' });
    expect(set).toMatchObject({ trustProxy: ['10.0.0.7', 'fd00::/8'], webhookAllowPrivate: true, metricsPort: 9100 });
    expect(set.alertThresholds).toEqual({ moodDrop: 50, lowMood: 325, participationDrop: 50 });
  });

  // Checked by `tsc` (npm run typecheck), not when the test runs.
  it('the computed type: the fields keep their types, and none is never, unknown or any', () => {
    expectTypeOf<Config['port']>().toEqualTypeOf<number>();
    expectTypeOf<Config['logLevel']>().toEqualTypeOf<string>();
    expectTypeOf<Pick<Config, 'trustProxy'>>().toEqualTypeOf<{ trustProxy?: string[] }>();
    expectTypeOf<Pick<Config, 'databaseUrl'>>().toEqualTypeOf<{ databaseUrl?: string }>();
    expectTypeOf<Config['webhookAllowPrivate']>().toEqualTypeOf<boolean>();
    expectTypeOf<Config['webhookRetryScheduleMs']>().toEqualTypeOf<number[]>();
    expectTypeOf<Config['alertThresholds']>().toEqualTypeOf<{ moodDrop: number; lowMood: number; participationDrop: number }>();
    // A schema TypeBox cannot type (a union built from an array is `never`) needs a `to` that says the type.
    type Vague<T> = { [K in keyof T]-?: [T[K]] extends [never] ? K : 0 extends 1 & T[K] ? K : unknown extends T[K] ? K : never }[keyof T];
    expectTypeOf<Vague<Config>>().toEqualTypeOf<never>();
    expectTypeOf<Vague<Config['alertThresholds']>>().toEqualTypeOf<never>();
  });
});
