// The Node recipe's UUIDv7 form (clients/node/hlculid.js: toUuidv7, fromUuidv7) against a real
// server, 10,000 ids each way, and the npm uuid package (validate, version, v7) on its output.
// Run by tests/clients/test_uuidv7.py with HLCULID_TEST_* set.
'use strict';
const path = require('path');
const assert = require('assert');
const { pathToFileURL } = require('url');
const recipe = path.join(__dirname, '..', '..', 'clients', 'node');
const pg = require(path.join(recipe, 'node_modules', 'pg'));
const { register, Generator, toUuidv7, fromUuidv7 } = require(path.join(recipe, 'hlculid.js'));

const N = 10000;

async function main() {
  // uuid is an ES module only: imported, from the recipe's node_modules
  const npmUuid = await import(pathToFileURL(require.resolve('uuid', { paths: [recipe] })).href);
  const client = new pg.Client({
    host: process.env.HLCULID_TEST_HOST, port: Number(process.env.HLCULID_TEST_PORT),
    user: 'postgres', database: 'postgres',
  });
  await client.connect();
  try {
    await register(client, pg.types);
    // ids made by the server: its v7 form equals the recipe's, npm uuid reads version 7, and the
    // forms are in the order of the ids
    const { rows } = await client.query(
      `SELECT id, hlculid_to_uuidv7(id)::text AS u
       FROM (SELECT hlculid_generate() AS id FROM generate_series(1, $1::int)) s ORDER BY id`, [N]);
    assert.strictEqual(rows.length, N);
    let previous = '';
    for (const r of rows) {
      const u = toUuidv7(r.id);
      assert.strictEqual(u, r.u);
      assert.ok(npmUuid.validate(u), u);
      assert.strictEqual(npmUuid.version(u), 7);
      assert.ok(previous < u, 'in the order of the ids');
      previous = u;
    }
    // ids made by the client (another publisher): the server makes the same v7 form
    const gen = new Generator(55);
    const mine = Array.from({ length: N }, () => gen.generate());
    const { rows: made } = await client.query(
      `SELECT hlculid_to_uuidv7(x)::text AS u FROM unnest($1::hlculid[]) WITH ORDINALITY AS t(x, i) ORDER BY i`,
      [mine]);
    assert.deepStrictEqual(made.map((r) => r.u), mine.map(toUuidv7));
    // the other way: npm uuid's v7() values and the client's forms read as the same ids on both
    // sides; v7() values, made increasing, read as increasing ids
    const theirs = Array.from({ length: N / 2 }, () => npmUuid.v7());
    const uuids = [...theirs, ...mine.slice(0, N / 2).map(toUuidv7)];
    const { rows: back } = await client.query(
      `SELECT hlculid_from_uuidv7(x)::text AS id FROM unnest($1::uuid[]) WITH ORDINALITY AS t(x, i) ORDER BY i`,
      [uuids]);
    assert.deepStrictEqual(back.map((r) => r.id), uuids.map(fromUuidv7));
    const read = theirs.map(fromUuidv7);
    for (let i = 1; i < read.length; i++) assert.ok(read[i - 1] < read[i], 'v7 order kept');
    assert.deepStrictEqual(mine.slice(0, N / 2).map((id) => id.slice(0, 33)),
      uuids.slice(N / 2).map((u) => fromUuidv7(u).slice(0, 33)), 'time, counter, publisher (and the top random bits) exact');
    // other uuids are refused, as by the server
    for (const other of [npmUuid.v4(), npmUuid.NIL, npmUuid.MAX, npmUuid.v1(), '017fc21c-5e7a-0001-000a-aaa333333333']) {
      assert.throws(() => fromUuidv7(other), /not an RFC 9562 version 7 uuid/, other);
      await assert.rejects(client.query('SELECT hlculid_from_uuidv7($1::uuid)', [other]),
        (e) => e.code === '22023', other);
    }
    console.log('node uuidv7: ok');
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
