// An application publisher in Node.js (clients/node/hlculid.js): ids made by the client, inserted
// and committed, then the generator's horizon reported with hlculid_advance_horizon; the server's
// watermark for that publisher lies above every id sent and at or below every id made after.
// Run by tests/clients/test_horizon.py with HLCULID_TEST_* set.
'use strict';
const path = require('path');
const assert = require('assert');
const recipe = path.join(__dirname, '..', '..', 'clients', 'node');
const pg = require(path.join(recipe, 'node_modules', 'pg'));
const { Generator } = require(path.join(recipe, 'hlculid.js'));

async function main() {
  const client = new pg.Client({
    host: process.env.HLCULID_TEST_HOST, port: Number(process.env.HLCULID_TEST_PORT),
    user: 'postgres', database: 'postgres',
  });
  await client.connect();
  try {
    await client.query('CREATE TABLE IF NOT EXISTS node_app_events (id hlculid PRIMARY KEY)');
    const gen = new Generator(21);
    const sent = [];
    for (let i = 0; i < 500; i++) sent.push(gen.generate());
    await client.query('INSERT INTO node_app_events SELECT unnest($1::text[])::hlculid', [sent]);
    const h = gen.horizon();
    assert.match(h, /^[0-9A-F]{12}-[0-9A-F]{4}-0000-000000000000$/);
    const after = gen.generate();
    await client.query('SELECT hlculid_advance_horizon(21, $1)', [h]);
    const { rows } = await client.query(
      `SELECT hlculid_watermark(ARRAY[21])::text AS w,
              (SELECT max(id) FROM node_app_events) < hlculid_watermark(ARRAY[21]) AS below,
              $1::hlculid >= hlculid_watermark(ARRAY[21]) AS after_at_or_above`, [after]);
    assert.strictEqual(rows[0].w, h);
    assert.strictEqual(rows[0].below, true);
    assert.strictEqual(rows[0].after_at_or_above, true);
    // an idle publisher's horizon moves with the wall clock
    await new Promise((r) => setTimeout(r, 5));
    assert.ok(gen.horizon() > h);
    // the horizon after a full counter carries into the next millisecond
    const frozen = new Generator(1, { now: () => 1700000000000 });
    for (let i = 0; i < 65535; i++) frozen.generate();
    assert.strictEqual(frozen.horizon(), (1700000000001).toString(16).toUpperCase().padStart(12, '0') + '-0000-0000-000000000000');
    console.log('node horizon: ok');
  } finally {
    await client.end();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
