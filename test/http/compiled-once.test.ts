import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { readySerializers, lazySerializers } from '../../src/http/lazy-compilers.js';
import { compileValidator } from '../../src/http/validation.js';

/**
 * Routes declare the same schemas again and again: a served app compiled 960 serializers for 96
 * distinct response schemas and 289 validators for 69 (docs/decisions.md, "Each distinct schema
 * compiled once"). Two schemas with the same JSON text share one compiled function; any
 * difference, or another part of the request, gets its own.
 */
const page = () =>
  Type.Object({ items: Type.Array(Type.Object({ id: Type.String(), level: Type.Integer() })), nextCursor: Type.Union([Type.String(), Type.Null()]) });
const route = (schema: unknown, httpStatus = '200') => ({ schema, method: 'GET', url: '/x', httpStatus }) as never;

describe('each distinct schema compiled once', () => {
  it('validators: one per schema text and part; the shared one still reports its own errors', () => {
    const a = compileValidator({ schema: page(), httpPart: 'body' });
    const b = compileValidator({ schema: page(), httpPart: 'body' });
    expect(a).toBe(b);
    const query = compileValidator({ schema: page(), httpPart: 'querystring' });
    expect(query).not.toBe(a); // the textual parts coerce, bodies do not
    const other = compileValidator({ schema: Type.Object({ id: Type.String() }), httpPart: 'body' });
    expect(other).not.toBe(a);
    expect(a({ items: [{ id: 'p1', level: '3' }], nextCursor: null })).toBe(false);
    expect(a.errors?.[0]).toMatchObject({ instancePath: '/items/0/level', keyword: 'type' });
    expect(b({ items: [{ id: 'p1', level: 3 }], nextCursor: null })).toBe(true);
    expect(query({ items: [{ id: 'p1', level: '3' }], nextCursor: null })).toBe(true);
  });

  for (const [name, controller] of [
    ['at ready', readySerializers],
    ['on first use', lazySerializers],
  ] as const) {
    it(`serializers ${name}: one per schema text and shared schemas, whatever the status or the app`, () => {
      const build = controller.compilersFactory!.buildSerializer!;
      const compile = build({}, {}) as (r: never) => (doc: unknown) => string;
      const first = compile(route(page()));
      expect(compile(route(page(), '201'))).toBe(first);
      const other = compile(route(Type.Object({ id: Type.String() })));
      expect(other).not.toBe(first);
      // Only the declared fields, as fast-json-stringify writes them.
      expect(first({ items: [{ id: 'p1', level: 3, secret: 'x' }], nextCursor: null, extra: 1 })).toBe('{"items":[{"id":"p1","level":3}],"nextCursor":null}');
      expect(other({ id: 'a', level: 3 })).toBe('{"id":"a"}');
      // Another app with the same shared schemas shares it; other shared schemas get their own.
      expect((build({}, {}) as (r: never) => (doc: unknown) => string)(route(page()))).toBe(first);
      const shared = { Thing: Type.Object({ id: Type.String() }, { $id: 'Thing' }) };
      const another = (build(shared, {}) as (r: never) => (doc: unknown) => string)(route(page()));
      expect(another).not.toBe(first);
      expect(another({ items: [], nextCursor: 'c' })).toBe('{"items":[],"nextCursor":"c"}');
    });
  }
});
