// The Node Generator's clock, without a server (tests/clients/test_generators.py): first the
// crate's own scenario (tests/data/clock_scenario.json, made by core/tests/fixtures/clock_scenario.rs
// from the crate's Generator) replayed with the same scripted clock, simulated sleep and seeded
// random source, every id and every refusal compared; then properties on the real clock: a
// million ids strictly increasing in a tight loop, observe refusing random uuids and ids beyond
// the skew bound without moving the clock, and the constructor's checks.
'use strict';
const assert = require('assert');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const hl = require(process.env.HLCULID_NODE_MODULE || path.join(__dirname, '../../clients/node/hlculid.js'));

const CANONICAL = /^[0-9A-F]{12}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;
const fields = (id) => {
  const h = id.replace(/-/g, '');
  return { ms: parseInt(h.slice(0, 12), 16), counter: parseInt(h.slice(12, 16), 16), publisher: parseInt(h.slice(16, 20), 16) };
};

// 1. The crate's scenario, id by id.
const M64 = (1n << 64n) - 1n;
function splitmix64(seed) {
  let state = BigInt(seed);
  return () => {
    state = (state + 0x9E3779B97F4A7C15n) & M64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & M64;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & M64;
    return Number((z ^ (z >> 31n)) & 0xffffffffffffn);
  };
}
function summary(ids, out) {
  if (ids.length <= 16) {
    out.ids = ids;
  } else {
    Object.assign(out, {
      count: ids.length, first: ids[0], last: ids[ids.length - 1],
      sha256: crypto.createHash('sha256').update(ids.join('\n')).digest('hex'),
    });
  }
}
function refusal(e, out) {
  if (!(e instanceof hl.HlculidError)) throw e;
  out.error = e.code;
  if (e.code === 'TooFarAhead') out.ahead_ms = e.aheadMs;
  if (e.code === 'PublisherTooWideForBigint') out.publisher = e.publisher;
}
const sorted = (o) => JSON.stringify(Object.keys(o).sort().reduce((a, k) => ({ ...a, [k]: o[k] }), {}));
const scenarioFile = process.env.HLCULID_CLOCK_SCENARIO || path.join(__dirname, '../data/clock_scenario.json');
const { steps } = JSON.parse(fs.readFileSync(scenarioFile, 'utf8'));
let now = 0;
let g = null;
let checked = 0;
steps.forEach((step, k) => {
  const got = {};
  switch (step.op) {
    case 'new':
      g = new hl.Generator(step.publisher, {
        maxSkewMs: step.max_skew_ms, now: () => now, sleep: (ms) => { now += ms; }, random: splitmix64(step.seed),
      });
      return;
    case 'clock':
      now = step.ms;
      return;
    case 'generate':
    case 'generate_bigint': {
      const ids = [];
      try {
        for (let i = 0; i < step.n; i++) ids.push(step.op === 'generate' ? g.generate() : g.generateBigint());
      } catch (e) {
        refusal(e, got);
      }
      summary(ids, got);
      break;
    }
    case 'horizon':
      summary([g.horizon()], got);
      break;
    case 'observe':
      try {
        g.observe(step.id);
        got.ok = true;
      } catch (e) {
        refusal(e, got);
      }
      break;
    default:
      assert.fail(`unknown step ${step.op}`);
  }
  got.now = now;
  if (sorted(got) !== sorted(step.expect)) {
    assert.fail(`step ${k} ${JSON.stringify(step)}: the crate made ${sorted(step.expect)}, Node ${sorted(got)}`);
  }
  checked++;
});
assert.ok(checked > 40 && checked === steps.filter((s) => s.expect).length, `${checked} steps checked`);

// 2. A million ids in a tight loop on the real clock: strictly increasing, every one canonical.
const real = new hl.Generator(12);
let last = real.generate();
for (let i = 0; i < 1_000_000; i++) {
  const id = real.generate();
  if (!(id > last)) assert.fail(`${id} is not above ${last}`);
  last = id;
}
assert.ok(CANONICAL.test(last) && fields(last).publisher === 12, last);
assert.ok(Math.abs(fields(last).ms - Date.now()) < 60_000, `${last} is not near the wall clock`);

// 3. observe on the real clock: refusals leave the clock where it was.
const o = new hl.Generator(3);
const before = o.generate();
for (const u of [crypto.randomUUID().replace(/-/g, ''), crypto.randomUUID().replace(/-/g, '').toUpperCase()]) {
  assert.throws(() => o.observe(u), (e) => e instanceof hl.HlculidError && e.code === 'RandomUuid');
}
assert.throws(() => o.observe(crypto.randomUUID()), (e) => e instanceof hl.HlculidError && e.code === 'RandomUuid');
assert.throws(() => o.observe('not an id'), (e) => !(e instanceof hl.HlculidError) && /invalid hlculid/.test(e.message));
const farMs = fields(before).ms + 60_000;
const far = hl.format(Buffer.from(farMs.toString(16).padStart(12, '0') + '0'.repeat(20), 'hex'));
assert.throws(() => o.observe(far), (e) => e.code === 'TooFarAhead' && e.aheadMs >= 59_000 && e.aheadMs <= 60_000);
assert.ok(fields(o.generate()).ms - fields(before).ms < 1_000, 'a refused observe moved the clock');
const nearMs = Date.now() + 300;
const near = hl.format(Buffer.from(nearMs.toString(16).padStart(12, '0') + '0005' + '0'.repeat(16), 'hex'));
o.observe(near);
assert.ok(o.generate() > near);
new hl.Generator(3, { maxSkewMs: 120_000 }).observe(far); // a wider skew, configured
assert.throws(() => new hl.Generator(3, { maxSkewMs: -1 }), /maxSkewMs/);
assert.throws(() => new hl.Generator(65_536), /publisher/);
assert.throws(() => new hl.Generator(-1), /publisher/);
assert.throws(() => new hl.Generator(1, { now: () => -5 }).generate(), (e) => e.code === 'WallClockOutOfRange');

console.log('node clock: ok');
