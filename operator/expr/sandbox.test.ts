// Sandbox tables: known template-injection escapes must fail with ExpressionError and never reach
// the host (process, Function, prototypes), and no escape may pollute Object.prototype.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExpressionError, createRenderer, initExpressions } from './index.js';

// A generous time budget: these escapes must fail on the sandbox's own rules (ExpressionError), not on time.
const r = createRenderer({}, { timeoutMs: 60_000 });
const vars = {
  inputs: { name: 'World', list: [1, 2], map: { a: 1 } },
  vars: { selfRef: '{{ render(vars.selfRef) }}' },
  hostFn: () => 'called',
  hostDate: new Date('2024-01-01T00:00:00Z'),
  hostMap: new Map([['a', 1]]),
};

afterEach(() => {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

describe('sandbox escapes', () => {
  it.each([
    ['{{ range.constructor("return process")() }}'],
    ["{{ ''.constructor.constructor('return process')() }}"],
    ["{{ ''.constructor }}"],
    ['{{ [].constructor }}'],
    ['{{ {}.__proto__ }}'],
    ['{{ cycler.constructor }}'],
    ['{{ joiner.__proto__ }}'],
    ['{{ joiner() }}'],
    ["{{ inputs['con' ~ 'structor'] }}"],
    ["{{ inputs['__proto__'] }}"],
    ['{{ inputs.map.constructor.prototype }}'],
    ['{{ inputs.list.prototype }}'],
    ['{{ inputs.name.toUpperCase() }}'],
    ['{{ inputs.name.toUpperCase }}'],
    ['{{ inputs.list.map }}'],
    ['{{ (inputs.name | upper).constructor }}'],
    ["{{ (inputs.name | upper)['constructor'] }}"],
    ['{{ process.env }}'],
    ['{{ global }}'],
    ['{{ globalThis }}'],
    ["{{ require('fs') }}"],
    ["{{ eval('1+1') }}"],
    ["{{ Function('return process')() }}"],
    ['{{ caller() }}'],
    ['{% set x = inputs.constructor %}{{ x }}'],
    ["{% set c = 'constructor' %}{{ inputs[c] }}"],
    ['{% set inputs.name = 1 %}'],
    ['{% for inputs.x in [1] %}{% endfor %}'],
    ['{% macro m() %}x{% endmacro %}{{ m() }}'],
    ['{% call m() %}x{% endcall %}'],
    ["{% include 'other' %}"],
    ["{% extends 'base' %}"],
    ["{% import 'x' as y %}"],
    ["{% from 'x' import y %}"],
    ['{{ r/abc/ }}'],
    ['{{ hostFn }}'],
    ['{{ hostFn() }}'],
    ['{{ hostDate.getTime }}'],
    ['{{ hostMap.a }}'],
    ['{{ { "__proto__": { "polluted": 1 } } }}'],
    ["{% set m = { 'constructor': 1 } %}{{ m }}"],
    ['{{ {"a": 1} | merge(fromJson(\'{"__proto__": {"polluted": 1}}\')) }}'],
    ['{{ render(vars.selfRef) }}'],
  ])('%s is rejected', (template) => {
    expect(() => r.render(template, vars)).toThrow(ExpressionError);
  });

  it.each([
    ['{{ range(0, 100000000) }}', 'EXPRESSION_MAX_BYTES'],
    ['{% for i in range(0, 10000) %}{% for j in range(0, 10000) %}{% endfor %}{% endfor %}', 'EXPRESSION_TIMEOUT_MS'],
  ])('%s is stopped by the budget (%s)', (template, setting) => {
    expect(() => createRenderer({}, { timeoutMs: 200 }).render(template, vars)).toThrow(setting);
  });

  it('parsed JSON with a __proto__ key exposes no prototype', () => {
    const out = r.render('{{ fromJson(\'{"__proto__": {"polluted": 1}}\').polluted ?? "safe" }}', vars);
    expect(out).toBe('safe');
  });

  it('YAML tags cannot smuggle host objects in', () => {
    const yamlVars = { ...vars, y: 'a: !!set {x}\nb: !!binary aGk=', bad: '__proto__: {polluted: 1}' };
    expect(r.render('{{ yaml(y).a }} {{ yaml(y).b }}', yamlVars)).toBe('["x"] aGk=');
    expect(() => r.render('{{ yaml(bad) }}', yamlVars)).toThrow(ExpressionError);
  });

  it('allowed member access is limited to data: own keys and length', () => {
    expect(r.render('{{ inputs.name.length }} {{ inputs.list.length }} {{ inputs.map.a }}', vars)).toBe('5 2 1');
  });

  it('host values are opaque: a Date prints as ISO but cannot be traversed', () => {
    expect(r.render('{{ hostDate }}', vars)).toBe('2024-01-01T00:00:00.000Z');
  });
});

describe('expression results are prototype-free', () => {
  const hostile = '{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}, "prototype": 1}';
  const keysVars = { ...vars, text: hostile, yamlText: 'a: {b: 1}', k: '__proto__', j: 'constructor' };

  beforeAll(async () => {
    await initExpressions();
  });

  const isBare = (value: unknown): boolean => value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === null;

  it.each([
    ['json()', '{{ json(text) }}'],
    ['fromJson()', '{{ fromJson(text) }}'],
    ['jq()', '{{ {} | jq(text) | first }}'],
    ['a JSON string made typed', '{{ text }}'],
  ])('%s: __proto__, constructor and prototype are own data keys of an object without a prototype', (_name, template) => {
    const out = r.renderTyped(template, keysVars) as Record<string, unknown>;
    expect(isBare(out)).toBe(true);
    expect(Object.keys(out)).toEqual(['__proto__', 'constructor', 'prototype']);
    expect(isBare(out.__proto__)).toBe(true);
    expect(isBare(out.constructor)).toBe(true);
  });

  it('yaml(), map literals and merge build objects without a prototype (they refuse reserved keys, as before)', () => {
    for (const template of ['{{ yaml(yamlText) }}', '{{ yaml(yamlText).a }}', "{{ {'a': 1} }}", "{{ {'a': 1} | merge({'b': 2}) }}", "{% set m = {'a': {'b': 1} } %}{{ m.a }}"]) {
      expect(isBare(r.renderTyped(template, keysVars)), template).toBe(true);
    }
  });

  it('renderValue: a key that renders to __proto__ or constructor is an own key, not a prototype', () => {
    const out = r.renderValue({ '{{ k }}': { polluted: 1 }, '{{ j }}': { prototype: { polluted: 1 } }, nested: { '{{ k }}': 2 } }, keysVars);
    expect(isBare(out)).toBe(true);
    expect(Object.keys(out)).toEqual(['__proto__', 'constructor', 'nested']);
    expect((out as Record<string, unknown>).polluted).toBeUndefined();
    expect(isBare((out as { nested: unknown }).nested)).toBe(true);
  });
});
