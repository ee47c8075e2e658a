// The Node Generator's clock rule, without a server (tests/clients/test_generators.py): every id
// is the server's L = max(L + 1, now_ms << 16) for the clock it read, checked against a BigInt
// model of that rule over a scripted clock (steps back, a frozen millisecond long enough to carry
// the counter into the next one, jumps ahead), ids strictly increasing over a million calls in a
// tight loop on the real clock, the fixed fields and text form, random bits that differ across
// the pool's refills, and generateBigint()/observe() on the same clock.
'use strict';
const assert = require('assert');
const path = require('path');
const hl = require(process.env.HLCULID_NODE_MODULE || path.join(__dirname, '../../clients/node/hlculid.js'));

const CANONICAL = /^[0-9A-F]{12}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;
const fields = (id) => {
  const h = id.replace(/-/g, '');
  return { ms: parseInt(h.slice(0, 12), 16), counter: parseInt(h.slice(12, 16), 16), publisher: parseInt(h.slice(16, 20), 16), random: h.slice(20) };
};
const clockOf = (id) => BigInt(`0x${id.replace(/-/g, '').slice(0, 16)}`);

// 1. A scripted clock against the model, every id checked.
const T = 1_780_000_000_000;
const script = [];
const run = (ms, n) => { for (let i = 0; i < n; i++) script.push(ms); };
run(T, 10); // a few ids in one millisecond
run(T + 1, 70_000); // more than 65,536 in one millisecond: the counter carries into T + 2
run(T + 2, 5); // the wall clock reaches the millisecond the counter carried into
run(T + 1_000, 3);
run(T - 5_000, 20); // a step back of 6 s: ids go on from the last one
run(T + 999, 3); // still behind logical time
run(T + 1_001, 2); // past it again: back to the wall clock, counter 0
for (let i = 0; i < 200_000; i++) script.push(T + 2_000 + Math.floor(i / 300) - (i % 997 === 0 ? 50 : 0)); // jitter
run(2 ** 47, 2); // a jump far ahead (year 6429): the ms field's top bits
let k = 0;
const g = new hl.Generator(0xABCD, { now: () => script[k] });
let model = 0n;
let prev = '';
const randoms = new Set();
for (k = 0; k < script.length; k++) {
  const id = g.generate();
  model = model + 1n > BigInt(script[k]) << 16n ? model + 1n : BigInt(script[k]) << 16n;
  if (clockOf(id) !== model) assert.fail(`id ${k} (${id}) for clock ${script[k]}: expected clock value ${model.toString(16)}`);
  if (!(id > prev)) assert.fail(`id ${k} (${id}) is not above ${prev}`);
  prev = id;
  if (k < 100_000) randoms.add(fields(id).random);
}
assert.ok(CANONICAL.test(prev) && hl.canonical(prev) === prev, prev);
assert.strictEqual(fields(prev).publisher, 0xABCD);
assert.strictEqual(fields(prev).ms, 2 ** 47);
assert.ok(randoms.size >= 99_990, `random bits repeat: ${randoms.size} distinct of 100,000`);

// 2. Counter overflow within one frozen millisecond, field by field.
const frozen = new hl.Generator(7, { now: () => T });
const seen = [];
for (let i = 0; i < 65_538; i++) seen.push(fields(frozen.generate()));
assert.deepStrictEqual([seen[0].ms, seen[0].counter], [T, 0]);
assert.deepStrictEqual([seen[65_535].ms, seen[65_535].counter], [T, 0xffff]);
assert.deepStrictEqual([seen[65_536].ms, seen[65_536].counter], [T + 1, 0]);
assert.deepStrictEqual([seen[65_537].ms, seen[65_537].counter], [T + 1, 1]);

// 3. A million ids in a tight loop on the real clock: strictly increasing, every one canonical.
const real = new hl.Generator(12);
let last = real.generate();
for (let i = 0; i < 1_000_000; i++) {
  const id = real.generate();
  if (!(id > last)) assert.fail(`${id} is not above ${last}`);
  last = id;
}
assert.ok(CANONICAL.test(last) && fields(last).publisher === 12, last);
assert.ok(Math.abs(fields(last).ms - Date.now()) < 60_000, `${last} is not near the wall clock`);

// 4. generateBigint() and observe() on the same clock.
let now = T;
const both = new hl.Generator(5, { now: () => now });
const a = both.generate();
const b = both.generateBigint();
const c = both.generate();
assert.ok(a < hl.bigintToHlculid(b) && hl.bigintToHlculid(b) < c, `${a} ${b} ${c}`);
const ahead = hl.format(Buffer.from('01B000000000FFF00001000000000000', 'hex'));
both.observe(ahead);
const d = both.generate();
assert.ok(d > ahead, `${d} after observing ${ahead}`);
assert.deepStrictEqual([fields(d).ms, fields(d).counter], [fields(ahead).ms, 0xfff1]);
both.observe(a); // an older id changes nothing
assert.ok(both.generate() > d);
now = T - 10_000; // a step back: bigint ids go on from the clock too
assert.ok(hl.bigintToHlculid(both.generateBigint()) > d);
assert.throws(() => new hl.Generator(65_536), /publisher/);
assert.throws(() => new hl.Generator(-1), /publisher/);

console.log('node clock: ok');
