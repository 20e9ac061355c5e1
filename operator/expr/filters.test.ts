// Tables for string, collection, number and encoding filters.
import { beforeAll, describe, expect, it } from 'vitest';
import { ExpressionError, createRenderer, initExpressions } from './index.js';

const r = createRenderer();

beforeAll(async () => {
  await initExpressions();
});
const vars = {
  s: 'hello world',
  path: 'a/b/c.txt',
  list: [3, 1, 2, 1],
  nested: [[1, 2], [3], 4],
  words: ['b', 'a', 'c'],
  map: { a: 1, b: 2 },
  other: { b: 3, c: 4 },
  num: 1234567.891,
  neg: -5,
  text: "it's",
  multi: 'line1\nline2',
};

describe('string filters', () => {
  it.each([
    ['{{ s | upper }}', 'HELLO WORLD'],
    ['{{ "ABC" | lower }}', 'abc'],
    ['{{ s | capitalize }}', 'Hello world'],
    ['{{ s | title }}', 'Hello World'],
    ['{{ "  x  " | trim }}', 'x'],
    ['{{ s | replace({"world": "there", "hello": "hi"}) }}', 'hi there'],
    ['{{ s | replace("o", "0") }}', 'hell0 w0rld'],
    ['{{ "a1b22" | replace("[0-9]+", "#", regexp=true) }}', 'a#b#'],
    ['{{ "a1b22" | replace({"[0-9]+": "#", "b": "B"}, regexp=true) }}', 'a#B#'],
    ['{{ "x-y" | replace({"([a-z])-([a-z])": "$2-$1"}, regexp=true) }}', 'y-x'],
    ['{{ "a,b,c" | split(",") }}', '["a","b","c"]'],
    ['{{ "a,b,c" | split(",", 2) }}', '["a","b,c"]'],
    ['{{ s | abbreviate(8) }}', 'hello...'],
    ['{{ "short" | abbreviate(8) }}', 'short'],
    ['{{ s | startsWith("hell") }} {{ s | endsWith("x") }}', 'true false'],
    ['{{ path | substringBefore("/") }}', 'a'],
    ['{{ path | substringAfter("/") }}', 'b/c.txt'],
    ['{{ path | substringBeforeLast("/") }}', 'a/b'],
    ['{{ path | substringAfterLast("/") }}', 'c.txt'],
    ['{{ path | substringAfter("#") }}', ''],
    ['{{ text | escapeChar("single") }}', "it\\'s"],
    ['{{ "say \\"hi\\"" | escapeChar("double") }}', 'say \\"hi\\"'],
    ['{{ text | escapeChar("shell") }}', "it'\\''s"],
    ['{{ "Héllo, World! 2024" | slugify }}', 'hello-world-2024'],
    ['{{ multi | indent(2) }}', 'line1\n  line2'],
    ['{{ multi | nindent(2) }}', '\n  line1\n  line2'],
    ['{{ s | base64encode }}', 'aGVsbG8gd29ybGQ='],
    ['{{ "aGVsbG8gd29ybGQ=" | base64decode }}', 'hello world'],
    ['{{ "a b&c=d/é" | urlencode }}', 'a+b%26c%3Dd%2F%C3%A9'],
    ['{{ "a+b%26c" | urldecode }}', 'a b&c'],
    ['{{ "abc" | md5 }}', '900150983cd24fb0d6963f7d28e17f72'],
    ['{{ "abc" | sha1 }}', 'a9993e364706816aba3e25717850c26c9cd0d89d'],
    ['{{ "abc" | sha256 }}', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['{{ "abc" | sha512 | slice(0, 16) }}', 'ddaf35a193617aba'],
    ['{{ s | reverse }}', 'dlrow olleh'],
    ['{{ s | slice(0, 5) }}', 'hello'],
    ['{{ 42 | string }}', '42'],
  ])('%s', (template, expected) => {
    expect(r.render(template, vars)).toBe(expected);
  });
});

describe('collection and number filters', () => {
  it.each([
    ['{{ list | first }} {{ list | last }} {{ s | first }}', '3 1 h'],
    ['{{ list | length }} {{ s | length }} {{ map | length }}', '4 11 2'],
    ['{{ map | keys }} {{ map | values }} {{ words | keys }}', '["a","b"] [1,2] [0,1,2]'],
    ['{{ words | join(", ") }}', 'b, a, c'],
    ['{{ words | join }}', 'bac'],
    ['{{ list | sort }} {{ list | rsort }}', '[1,1,2,3] [3,2,1,1]'],
    ['{{ words | sort | first }}', 'a'],
    ['{{ list | reverse }}', '[1,2,1,3]'],
    ['{{ list | slice(1, 3) }}', '[1,2]'],
    ['{{ list | chunk(3) }}', '[[3,1,2],[1]]'],
    ['{{ list | distinct }}', '[3,1,2]'],
    ['{{ nested | flatten }}', '[1,2,3,4]'],
    ['{{ map | merge(other) }}', '{"a":1,"b":3,"c":4}'],
    ['{{ words | merge(["d"]) }}', '["b","a","c","d"]'],
    ['{{ neg | abs }}', '5'],
    ['{{ "42" | number + 1 }}', '43'],
    ['{{ "4.7" | number("INT") }}', '4'],
    ['{{ num | numberFormat("#,##0.00") }}', '1,234,567.89'],
    ['{{ 3.14159 | numberFormat("0.###") }}', '3.142'],
    ['{{ 0.256 | numberFormat("0.0%") }}', '25.6%'],
    ['{{ 3.14159 | round(2) }} {{ 2.5 | round }}', '3.14 3'],
    ['{{ map | toJson }} {{ "x" | json }}', '{"a":1,"b":2} "x"'],
    ['{{ map | yaml }}', 'a: 1\nb: 2\n'],
    ['{{ {"a": [1, 2]} | jq(".a[]") }}', '[1,2]'],
    ['{{ { "a": { "b": 5 } } | jq(".a.b") | first }}', '5'],
    ['{{ \'{"x": 1}\' | jq(".x") | first }}', '1'],
  ])('%s', (template, expected) => {
    expect(r.render(template, vars)).toBe(expected);
  });

  it.each([
    ['{{ map | join(",") }}', 'join: expected a list'],
    ['{{ "abc" | abs }}', 'expected a number'],
    ['{{ list | jq(".[") }}', 'jq'],
    ['{{ s | escapeChar("weird") }}', 'escapeChar'],
  ])('%s fails', (template, message) => {
    expect(() => r.render(template, vars)).toThrow(ExpressionError);
    expect(() => r.render(template, vars)).toThrow(message);
  });
});
