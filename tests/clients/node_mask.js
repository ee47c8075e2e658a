// The Node client's masks, without a server (tests/clients/test_masks.py): its SipHash-2-4
// against the reference vectors of the SipHash paper, then every case of
// tests/data/mask_vectors.json (made by core/tests/fixtures/mask_vectors.rs from the crate's Mask)
// replayed both ways (and the UUIDv47 v4 facades, and UUIDv47's own vectors), then properties: round trips of random values, a wrong key, errors that
// never show the key, a Mask that never shows it either.
'use strict';
const assert = require('assert');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const util = require('util');
const hl = require(process.env.HLCULID_NODE_MODULE || path.join(__dirname, '../../clients/node/hlculid.js'));

// 1. SipHash-2-4 of the messages 00, 00 01, ..., 00 .. 0e under the key 00 .. 0f: the reference
// implementation's vectors.h (vectors_sip64, each read little-endian); the last is the paper's
// example in its appendix A.
const SIPHASH_VECTORS = [
  0x726fdb47dd0e0e31n, 0x74f839c593dc67fdn, 0x0d6c8009d9a94f5an, 0x85676696d7fb7e2dn,
  0xcf2794e0277187b7n, 0x18765564cd99a68dn, 0xcbc9466e58fee3cen, 0xab0200f58b01d137n,
  0x93f5f5799a932462n, 0x9e0082df0ba9e4b0n, 0x7a5dbbc594ddb9f3n, 0xf4b32f46226bada7n,
  0x751e8fbc860ee5fbn, 0x14ea5627c0843d90n, 0xf723ca908e7af2een, 0xa129ca6149be45e5n,
];
const paperKey = Uint8Array.from({ length: 16 }, (_, i) => i);
SIPHASH_VECTORS.forEach((want, n) => {
  const got = hl.siphash24(paperKey, Uint8Array.from({ length: n }, (_, i) => i));
  assert.strictEqual(got, want, `SipHash-2-4 of ${n} bytes: ${got.toString(16)}`);
});
// a Buffer that is a view into a larger pool reads only its own bytes
const pooled = Buffer.from('ff000102030405060708090a0b0c0d0eff', 'hex').subarray(1, 16);
assert.strictEqual(hl.siphash24(paperKey, pooled), 0xa129ca6149be45e5n);
// more whole 8-byte words: the vectors of 16, 62 and 63 bytes
for (const [n, want] of [[16, 0x3f2acc7f57c29bdbn], [62, 0xe51b38608ef25f57n], [63, 0x958a324ceb064572n]]) {
  assert.strictEqual(hl.siphash24(paperKey, Uint8Array.from({ length: n }, (_, i) => i)), want, `${n} bytes`);
}

// 2. The crate's vectors, case by case.
const file = process.env.HLCULID_MASK_VECTORS || path.join(__dirname, '../data/mask_vectors.json');
const { cases } = JSON.parse(fs.readFileSync(file, 'utf8'));
const sha256 = (lines) => crypto.createHash('sha256').update(lines.join('\n')).digest('hex');
const canonicalOf = (v) => hl.format(Buffer.from(v.toString(16).padStart(32, '0'), 'hex'));
const uuidOf = (id) => id.replace(/-/g, '').toLowerCase().replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
const counts = {};
for (const c of cases) {
  const m = c.key === undefined ? null : new hl.Mask(c.key);
  const where = JSON.stringify(c);
  switch (c.kind) {
    case 'id':
      assert.strictEqual(m.mask(c.value), c.masked, where);
      assert.strictEqual(m.unmask(c.masked), c.value, where);
      // the value's 16 bytes read as a masked uuid
      assert.strictEqual(m.unmask(c.value.replace(/-/g, '')), c.unmasked, where);
      assert.strictEqual(m.mask(c.unmasked), uuidOf(c.value), where);
      break;
    case 'bigint':
      assert.strictEqual(m.maskBigint(c.value), c.masked, where);
      assert.strictEqual(m.maskBigint(BigInt(c.value)), c.masked, where);
      assert.strictEqual(m.unmaskBigint(c.masked), c.value, where);
      assert.strictEqual(m.unmaskBigint(c.value), c.unmasked, where);
      assert.strictEqual(m.maskBigint(c.unmasked), c.value, where);
      break;
    case 'v4_facade':
      assert.strictEqual(m.toV4Facade(c.value), c.facade, where);
      assert.strictEqual(m.fromV4Facade(c.facade), c.back, where);
      assert.strictEqual(m.fromV4Facade(c.facade.toUpperCase()), c.back, where);
      break;
    case 'id_run': {
      const first = BigInt(`0x${c.first.replace(/-/g, '')}`);
      const run = [];
      for (let k = 0n; k < BigInt(c.count); k++) run.push(m.mask(canonicalOf(first + k)));
      assert.strictEqual(sha256(run), c.sha256, where);
      break;
    }
    case 'bigint_run': {
      const first = BigInt(c.first);
      const run = [];
      for (let k = 0n; k < BigInt(c.count); k++) run.push(m.maskBigint(first + k));
      assert.strictEqual(sha256(run), c.sha256, where);
      break;
    }
    case 'bad_key': {
      const message = c.error === 'Length'
        ? `the text given has ${c.n} characters`
        : `character ${c.at + 1} of the text given is not one`;
      assert.throws(() => new hl.Mask(c.text), (e) => e instanceof RangeError && e.message.includes(message)
        && (c.text.length < 4 || !e.message.includes(c.text.slice(2, 10))), where);
      break;
    }
    case 'bad_bigint': {
      const k = new hl.Mask('000102030405060708090a0b0c0d0e0f');
      // a BigInt out of range is a RangeError; a string may already fail as a bigint id's text
      for (const [v, kind] of [[c.value, Error], [BigInt(c.value), RangeError]]) {
        assert.throws(() => k.maskBigint(v), kind, where);
        assert.throws(() => k.unmaskBigint(v), kind, where);
      }
      break;
    }
    default:
      assert.fail(`unknown case ${where}`);
  }
  counts[c.kind] = (counts[c.kind] || 0) + 1;
}
assert.ok(counts.id >= 100 && counts.bigint >= 50 && counts.v4_facade >= 100 && counts.id_run && counts.bigint_run && counts.bad_key, JSON.stringify(counts));

// UUIDv47's own vectors (the Go port n2p5/uuid47, made with the C header) under its README key
// {k0 = 0x0123456789abcdef, k1 = 0xfedcba9876543210}
const readmeKey = Buffer.alloc(16);
readmeKey.writeBigUInt64LE(0x0123456789abcdefn, 0);
readmeKey.writeBigUInt64LE(0xfedcba9876543210n, 8);
const v47 = new hl.Mask(readmeKey);
for (const [v7, v4] of [
  ['018f2d9f-9a2a-7def-8c3f-7b1a2c4d5e6f', '2463c780-7fca-4def-8c3f-7b1a2c4d5e6f'],
  ['00000000-0000-7000-8000-000000000000', '22d97126-9609-4000-8000-000000000000'],
  ['00000000-007b-7aaa-8123-456789abcdef', 'b108050e-46b6-4aaa-8123-456789abcdef'],
  ['00000010-007b-7aad-9032-547698badcfe', 'bc75bd50-97ef-4aad-9032-547698badcfe'],
  ['00000020-007b-7aa4-a301-6745ab89efcd', 'a3e09c87-bf85-4aa4-a301-6745ab89efcd'],
]) {
  assert.strictEqual(v47.toV4Facade(hl.fromUuidv7(v7)), v4);
  assert.strictEqual(hl.toUuidv7(v47.fromV4Facade(v4)), v7);
}
for (const notV4 of [hl.toUuidv7('017FC21C5E7A-0001-000A-AAA333333333'), '017fc21c-5e7a-0001-000a-aaa333333333',
  '00000000-0000-4000-c000-000000000000']) {
  assert.throws(() => v47.fromV4Facade(notV4), /not a v4 facade/);
}

// 3. Properties.
const m = new hl.Mask(crypto.randomBytes(16));
const other = new hl.Mask(crypto.randomBytes(16));
for (let k = 0; k < 2000; k++) {
  const id = hl.format(crypto.randomBytes(16));
  const masked = m.mask(id);
  assert.match(masked, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.strictEqual(m.unmask(masked), id);
  assert.strictEqual(m.unmask(masked.toUpperCase()), id);
  assert.notStrictEqual(other.unmask(masked), id);
  const big = BigInt(`0x${crypto.randomBytes(8).toString('hex')}`) >> 1n || 1n;
  const mb = m.maskBigint(big);
  assert.ok(BigInt(mb) >= 1n && BigInt(mb) < 1n << 63n, mb);
  assert.strictEqual(m.unmaskBigint(mb), big.toString());
  assert.strictEqual(BigInt(m.unmaskValue(m.maskValue(BigInt(`0x${id.replace(/-/g, '')}`)))),
    BigInt(`0x${id.replace(/-/g, '')}`));
}
// other text forms of an id mask alike; a random uuid's uuid spelling is no id
const id = '017FC21C5E7A-0001-000A-AAA333333333';
for (const form of [id.toLowerCase(), id.replace(/-/g, ''), '017fc21c-5e7a-0001-000a-aaa333333333', '01FZ11RQKT000G02NAMCSK6CSK']) {
  assert.strictEqual(m.mask(form), m.mask(id), form);
}
assert.throws(() => m.mask(crypto.randomUUID()), /random uuid/);
assert.throws(() => m.unmask('not a uuid'), /invalid masked id/);
assert.throws(() => m.maskBigint(1), TypeError); // a Number cannot hold ids above 2^53
assert.throws(() => m.maskBigint('01'), /leading zeros/);
// the key: 16 bytes or 32 hex digits; never shown
const secret = '5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e';
assert.strictEqual(new hl.Mask(secret.toUpperCase()).mask(id), new hl.Mask(Buffer.from(secret, 'hex')).mask(id));
const shown = new hl.Mask(secret);
for (const text of [util.inspect(shown, { showHidden: true, depth: 5 }), JSON.stringify(shown), String(shown),
  Object.keys(shown).join()]) {
  assert.ok(!text.includes('5e5e') && !text.includes(BigInt(`0x${secret.slice(16)}`).toString()), text);
}
for (const bad of [secret.slice(1), `${secret.slice(1)}z`, `${secret}\n`, `0x${secret.slice(2)}`]) {
  assert.throws(() => new hl.Mask(bad), (e) => !e.message.includes('5e5e'));
}
assert.throws(() => new hl.Mask(new Uint8Array(15)), /16 bytes/);
assert.throws(() => new hl.Mask(12), TypeError);
assert.throws(() => new hl.Mask('😀'.repeat(16)), /has 16 characters/); // code points, as the crate counts

console.log(`node mask: ok ${JSON.stringify(counts)}`);
