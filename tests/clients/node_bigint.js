// bigint ids in the Node.js recipe (clients/node/hlculid.js) against a real server: 10,000 ids made
// by the server decoded by the client and 10,000 made by the client decoded by the server, through
// a bigint column; the two widths from one clock; bounds at the ends of the range; JSON as decimal
// strings; the shared list of decimal forms (tests/data/bigint_forms.json). node-postgres gives int8 values
// as strings (its default, kept): never a Number. Run by tests/clients/test_node.py with
// HLCULID_TEST_* set.
'use strict';
const fs = require('fs');
const path = require('path');
const assert = require('assert');
const recipe = path.join(__dirname, '..', '..', 'clients', 'node');
const pg = require(path.join(recipe, 'node_modules', 'pg'));
const {
  register, Generator, parseBigint, bigintFromFields, bigintFields, bigintMinOf, bigintMaxOf,
  bigintToHlculid, hlculidToBigint,
} = require(path.join(recipe, 'hlculid.js'));

const N = 10000;
const less = (a, b) => BigInt(a) < BigInt(b);

async function serverIdsDecodeInTheClient(client) {
  const { rows } = await client.query(
    `SELECT b, b::text AS t, (extract(epoch FROM hlculid_bigint_ts(b)) * 1000)::int8 AS ms,
            hlculid_bigint_counter(b) AS c, hlculid_bigint_publisher(b) AS p,
            hlculid_from_bigint(b)::text AS wide,
            hlculid_bigint_min(hlculid_bigint_ts(b)) AS lo, hlculid_bigint_max(hlculid_bigint_ts(b)) AS hi
     FROM (SELECT 1 AS part, i, hlculid_generate_bigint() AS b FROM generate_series(1, $1::int / 2) i
           UNION ALL SELECT 2, i, b FROM unnest(hlculid_generate_bigint_n($1::int / 2)) WITH ORDINALITY u(b, i)) s
     ORDER BY part, i`, [N]); // the order each part made them in: a parallel append may interleave them
  assert.strictEqual(rows.length, N);
  for (const r of rows) {
    assert.strictEqual(typeof r.b, 'string');
    assert.strictEqual(r.b, r.t);
    const f = bigintFields(r.b);
    assert.deepStrictEqual([String(f.ms), f.counter, f.publisher], [r.ms, r.c, r.p]);
    assert.strictEqual(f.publisher, 50);
    assert.strictEqual(bigintToHlculid(r.b), r.wide);
    assert.strictEqual(hlculidToBigint(r.wide), r.b);
    assert.deepStrictEqual([bigintMinOf(f.date), bigintMaxOf(f.date)], [r.lo, r.hi]);
  }
  for (let i = 1; i < N; i++) {
    if (i !== N / 2) assert.ok(less(rows[i - 1].b, rows[i].b), 'server ids increase');
  }
  assert.strictEqual(new Set(rows.map((r) => r.b)).size, N);
  // a bigint[] result is an array of strings too
  const { rows: [a] } = await client.query('SELECT hlculid_generate_bigint_n(3) AS ids');
  assert.ok(a.ids.length === 3 && a.ids.every((x) => typeof x === 'string' && parseBigint(x) > 0n));
}

async function clientIdsGoIntoABigintColumn(client) {
  await client.query('DROP TABLE IF EXISTS node_big; CREATE TABLE node_big (id bigint PRIMARY KEY, n int)');
  const gen = new Generator(62);
  const start = new Date(Date.now() - 5);
  const mine = Array.from({ length: N }, () => gen.generateBigint());
  for (let i = 1; i < N; i++) assert.ok(less(mine[i - 1], mine[i]), 'client ids increase');
  // strings as an int8[] parameter, and BigInt values as parameters
  await client.query(
    'INSERT INTO node_big SELECT id, n FROM unnest($1::int8[]) WITH ORDINALITY AS u(id, n) WHERE n > 10', [mine]);
  for (let i = 0; i < 10; i++) {
    await client.query('INSERT INTO node_big VALUES ($1, $2)', [BigInt(mine[i]), i + 1]);
  }
  const { rows } = await client.query(
    `SELECT id, n, (extract(epoch FROM hlculid_bigint_ts(id)) * 1000)::int8 AS ms,
            hlculid_bigint_counter(id) AS c, hlculid_bigint_publisher(id) AS p,
            hlculid_from_bigint(id)::text AS wide
     FROM node_big ORDER BY id`);
  assert.deepStrictEqual(rows.map((r) => r.id), mine);
  rows.forEach((r, i) => {
    const f = bigintFields(mine[i]);
    assert.deepStrictEqual([r.n, r.ms, r.c, r.p, r.wide],
      [i + 1, String(f.ms), f.counter, 62, bigintToHlculid(mine[i])]);
  });
  // a time window with bound parameters
  const end = new Date(Date.now() + 5);
  const { rows: [w] } = await client.query(
    'SELECT count(*)::int AS c FROM node_big WHERE id BETWEEN $1 AND $2', [bigintMinOf(start), bigintMaxOf(end)]);
  assert.strictEqual(w.c, N);
}

async function widthsFromOneClockSortTogether(client) {
  const gen = new Generator(63);
  const made = [];
  for (let i = 0; i < 2000; i++) made.push(gen.generate(), bigintToHlculid(gen.generateBigint()));
  for (let i = 1; i < made.length; i++) assert.ok(made[i - 1] < made[i], 'canonical text order is id order');
  await register(client, pg.types);
  const { rows } = await client.query(
    'SELECT x, hlculid_to_bigint(x) AS b FROM unnest($1::hlculid[]) x ORDER BY x', [made]);
  assert.deepStrictEqual(rows.map((r) => r.x), made);
  assert.deepStrictEqual(rows.map((r) => r.b), made.map(hlculidToBigint));
  // a counter that does not fit 11 bits: 22003 on the server, a RangeError here
  const wide = made[0].slice(0, 13) + '0800' + made[0].slice(17);
  await assert.rejects(client.query('SELECT hlculid_to_bigint($1)', [wide]), { code: '22003' });
  assert.throws(() => hlculidToBigint(wide), { name: 'RangeError', message: /counter 2048 does not fit/ });
}

async function boundsAtTheEndsOfTheRange(client) {
  const first = new Date(0);
  const last = new Date(Date.UTC(2109, 4, 15, 7, 35, 11, 103));
  for (const d of [first, last]) {
    const { rows: [r] } = await client.query('SELECT hlculid_bigint_min($1) AS lo, hlculid_bigint_max($1) AS hi', [d]);
    assert.deepStrictEqual([bigintMinOf(d), bigintMaxOf(d)], [r.lo, r.hi]);
  }
  assert.strictEqual(bigintMaxOf(last), ((1n << 63n) - 1n).toString());
  for (const d of [new Date(-1), new Date(last.getTime() + 1)]) {
    await assert.rejects(client.query('SELECT hlculid_bigint_min($1)', [d]), { code: '22008' });
    assert.throws(() => bigintMinOf(d), RangeError);
  }
}

function frozenClock() {
  const realNow = Date.now;
  const frozen = realNow();
  Date.now = () => frozen;
  try {
    const gen = new Generator(64);
    const ids = Array.from({ length: 5000 }, () => gen.generateBigint());
    for (let i = 1; i < ids.length; i++) assert.ok(less(ids[i - 1], ids[i]));
    assert.deepStrictEqual(ids.slice(2046, 2050).map((b) => [bigintFields(b).ms - frozen, bigintFields(b).counter]),
      [[0, 2046], [0, 2047], [1, 0], [1, 1]]);
    // 128-bit ids take counter values a bigint cannot hold; the next bigint moves to the next ms
    let wide;
    for (let i = 0; i < 3000; i++) wide = gen.generate();
    const after = gen.generateBigint();
    assert.deepStrictEqual([bigintFields(after).ms - frozen, bigintFields(after).counter], [3, 0]);
    assert.ok(wide < bigintToHlculid(after) && bigintToHlculid(after) < gen.generate());
  } finally {
    Date.now = realNow;
  }
}

function publisherOver1023() {
  const gen = new Generator(1024);
  const first = gen.generate();
  assert.throws(() => gen.generateBigint(), (e) => e instanceof RangeError && e.code === 'PublisherTooWideForBigint' &&
    e.publisher === 1024 && /^publisher 1024 does not fit a bigint id: .* 0 to 1023/.test(e.message));
  assert.ok(gen.generate() > first);
  assert.strictEqual(bigintFields(new Generator(1023).generateBigint()).publisher, 1023);
  assert.throws(() => bigintFromFields(0, 0, 1024), RangeError);
  assert.throws(() => hlculidToBigint(first), RangeError);
}

async function jsonCarriesStrings(client) {
  const id = new Generator(65).generateBigint();
  const doc = JSON.stringify({ id });
  assert.strictEqual(doc, `{"id":"${id}"}`);
  assert.throws(() => JSON.stringify({ id: BigInt(id) }), TypeError); // never a number by accident
  const { rows: [r] } = await client.query(
    `SELECT ($1::jsonb->>'id')::int8 AS back, jsonb_typeof($1::jsonb->'id') AS kind,
            jsonb_build_object('id', s.b::text)::text AS server_doc, to_jsonb(s.b)::text AS as_number, s.b
     FROM (SELECT hlculid_generate_bigint() AS b) s`, [doc]);
  assert.deepStrictEqual([r.back, r.kind], [id, 'string']);
  assert.strictEqual(JSON.parse(r.server_doc).id, r.b);
  // the server's to_jsonb(bigint) is a number: JSON.parse rounds it to another id
  assert.strictEqual(r.as_number, r.b);
  assert.notStrictEqual(String(JSON.parse(r.as_number)), r.b);
  assert.throws(() => parseBigint(JSON.parse(r.as_number)), TypeError);
  assert.throws(() => bigintFields(Number(id)), TypeError);
}

function sharedDecimalForms() {
  const doc = JSON.parse(fs.readFileSync(path.join(__dirname, '../data/bigint_forms.json'), 'utf8'));
  assert.ok(doc.accepted.length >= 3 && doc.rejected.length >= 10);
  for (const c of doc.accepted) {
    const f = bigintFields(c.input);
    assert.deepStrictEqual([parseBigint(c.input).toString(), f.ms, f.counter, f.publisher],
      [c.input, c.ms, c.counter, c.publisher], c.why);
  }
  for (const c of doc.rejected) assert.throws(() => parseBigint(c.input), /invalid bigint id/, c.why);
  assert.throws(() => parseBigint(-1n), RangeError);
  assert.throws(() => parseBigint(1n << 63n), RangeError);
}

async function main() {
  frozenClock();
  publisherOver1023();
  sharedDecimalForms();
  const client = new pg.Client({
    host: process.env.HLCULID_TEST_HOST, port: Number(process.env.HLCULID_TEST_PORT),
    user: 'postgres', database: 'postgres',
  });
  await client.connect();
  try {
    await serverIdsDecodeInTheClient(client);
    await clientIdsGoIntoABigintColumn(client);
    await widthsFromOneClockSortTogether(client);
    await boundsAtTheEndsOfTheRange(client);
    await jsonCarriesStrings(client);
    console.log('node bigint: ok');
  } finally {
    await client.end();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
