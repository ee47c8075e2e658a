// The Node.js recipe (clients/node/hlculid.js) against a real server: 10,000 ids made by the
// server and 10,000 made by the client, as text results and string parameters, and a time window
// with bound parameters. Text only: node-postgres 8 decodes every row value as UTF-8 before a
// binary parser sees it, which garbles binary values of any 16-byte type (uuid too). Run by tests/clients/test_node.py with HLCULID_TEST_* set.
'use strict';
const path = require('path');
const assert = require('assert');
const recipe = path.join(__dirname, '..', '..', 'clients', 'node');
const pg = require(path.join(recipe, 'node_modules', 'pg'));
const { register, Generator, minOf, maxOf, canonical } = require(path.join(recipe, 'hlculid.js'));

const N = 10000;

async function main() {
  const client = new pg.Client({
    host: process.env.HLCULID_TEST_HOST, port: Number(process.env.HLCULID_TEST_PORT),
    user: 'postgres', database: 'postgres',
  });
  await client.connect();
  try {
    await register(client, pg.types);
    // server ids: canonical strings, equal to the server's own text and to the client's reading
    // of the uuid form
    const { rows } = await client.query(
      'SELECT id, id::text AS t, id::uuid AS u FROM (SELECT hlculid_generate() AS id FROM generate_series(1, $1::int)) s',
      [N]);
    assert.strictEqual(rows.length, N);
    for (const r of rows) {
      assert.strictEqual(r.id, r.t);
      assert.strictEqual(canonical(r.u), r.id);
    }
    // client ids, as string parameters
    await client.query('DROP TABLE IF EXISTS node_events; CREATE TABLE node_events (id hlculid PRIMARY KEY, n int)');
    const gen = new Generator(54);
    const start = new Date(Date.now() - 5);
    const mine = Array.from({ length: N }, () => gen.generate());
    for (let i = 1; i < N; i++) assert.ok(mine[i - 1] < mine[i], 'client ids increase');
    await client.query(
      'INSERT INTO node_events SELECT id, n FROM unnest($1::hlculid[]) WITH ORDINALITY AS u(id, n)', [mine]);
    const { rows: back } = await client.query('SELECT id FROM node_events ORDER BY id');
    assert.deepStrictEqual(back.map((r) => r.id), mine);
    // ULIDs and the uuid form go in as text too
    const { rows: [u] } = await client.query('SELECT $1::hlculid AS a, $2::hlculid AS b',
      [mine[0].replace(/-/g, '').toLowerCase(), mine[1]]);
    assert.deepStrictEqual([u.a, u.b], [mine[0], mine[1]]);
    // a time window with bound parameters, as the planner estimates it (the docs' recipe)
    const end = new Date(Date.now() + 5);
    const { rows: [w] } = await client.query(
      'SELECT count(*)::int AS c FROM node_events WHERE id <@ tstzrange($1, $2)', [start, end]);
    assert.strictEqual(w.c, N);
    const { rows: [none] } = await client.query(
      'SELECT count(*)::int AS c FROM node_events WHERE id <@ tstzrange($1, $2)', [end, new Date(end.getTime() + 3600e3)]);
    assert.strictEqual(none.c, 0);
    // minOf/maxOf: the same window as explicit bounds
    const { rows: [b] } = await client.query(
      'SELECT count(*)::int AS c FROM node_events WHERE id >= $1 AND id <= $2', [minOf(start), maxOf(end)]);
    assert.strictEqual(b.c, N);
    const { rows: [a] } = await client.query(
      'SELECT count(*)::int AS c FROM node_events WHERE id > $1', [mine[N / 2]]);
    assert.strictEqual(a.c, N - N / 2 - 1);
    console.log('node recipe: ok');
  } finally {
    await client.end();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
