// The Node.js consumer (clients/node/hlculid.js Consumer) against the server: writers that commit
// out of order beside it (a naive cursor in the same run loses rows; the consumer gets every
// committed row once, in id order), a handler failing on chosen rows (retries, then dead letters,
// the consumer going on), stop() during an idle wait and during a batch, the lag as a number.
// Run by tests/clients/test_consumer.py with HLCULID_TEST_* set.
'use strict';
const path = require('path');
const assert = require('assert');
const recipe = path.join(__dirname, '..', '..', 'clients', 'node');
const pg = require(path.join(recipe, 'node_modules', 'pg'));
const { Consumer } = require(path.join(recipe, 'hlculid.js'));

const config = {
  host: process.env.HLCULID_TEST_HOST, port: Number(process.env.HLCULID_TEST_PORT),
  user: 'postgres', database: 'postgres',
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function connect() {
  const c = new pg.Client(config);
  await c.connect();
  return c;
}
async function until(cond, ms = 20000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) return false;
    await sleep(20);
  }
  return true;
}

async function lateCommits(db) {
  await db.query('DROP TABLE IF EXISTS nc_ev, nc_done');
  await db.query('CREATE TABLE nc_ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)');
  await db.query('CREATE TABLE nc_done (id hlculid)');
  const order = [];
  const consumer = new Consumer(config, 'nc_ev', 'nc_main', { Client: pg.Client, waitTimeout: 5 });
  const running = consumer.run(async (rows, client) => {
    order.push(...rows.map((r) => r.id));
    await client.query('INSERT INTO nc_done SELECT unnest($1::text[])::hlculid', [rows.map((r) => r.id)]);
  });
  // a naive cursor beside it
  const naive = new Set();
  let stopNaive = false;
  const naiveLoop = (async () => {
    const c = await connect();
    let last = '000000000000-0000-0000-000000000000';
    while (!stopNaive) {
      const { rows } = await c.query('SELECT id::text FROM nc_ev WHERE id > $1::hlculid ORDER BY id LIMIT 1000', [last]);
      for (const r of rows) naive.add(r.id);
      if (rows.length) last = rows[rows.length - 1].id;
      await sleep(5);
    }
    await c.end();
  })();
  // 6 writers: a third commit 0-40 ms late, 5 % roll back
  const committed = new Set();
  const end = Date.now() + 2000;
  await Promise.all([...Array(6).keys()].map(async (w) => {
    const c = await connect();
    while (Date.now() < end) {
      await c.query('BEGIN');
      const { rows } = await c.query('INSERT INTO nc_ev (n) VALUES ($1) RETURNING id::text', [w]);
      if (Math.random() < 1 / 3) await sleep(Math.random() * 40);
      if (Math.random() < 0.05) {
        await c.query('ROLLBACK');
      } else {
        await c.query('COMMIT');
        committed.add(rows[0].id);
      }
    }
    await c.end();
  }));
  assert.ok(await until(async () => Number((await db.query('SELECT count(*) AS n FROM nc_done')).rows[0].n) >= committed.size),
    'the consumer did not catch up');
  await sleep(300);
  stopNaive = true;
  await naiveLoop;
  consumer.stop();
  await running;
  const handled = (await db.query('SELECT id::text FROM nc_done')).rows.map((r) => r.id);
  assert.ok(committed.size > 100, `only ${committed.size} rows`);
  assert.strictEqual(new Set(handled).size, handled.length, 'a row was handled twice');
  assert.deepStrictEqual(new Set(handled), committed);
  assert.deepStrictEqual(order, [...order].sort(), 'rows came out of id order');
  const lost = [...committed].filter((i) => !naive.has(i)).length;
  assert.ok(lost > 0, 'the naive cursor lost nothing: the writers did not commit out of order');
  console.log(`${committed.size} rows: the consumer got all; the naive cursor lost ${lost}`);
}

async function failingRows(db) {
  await db.query('DROP TABLE IF EXISTS nr_ev, nr_done');
  await db.query('CREATE TABLE nr_ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)');
  await db.query('CREATE TABLE nr_done (id hlculid)');
  const ids = (await db.query('INSERT INTO nr_ev (n) SELECT g FROM generate_series(1, 60) g RETURNING id::text')).rows.map((r) => r.id);
  const failing = new Set([ids[6], ids[22], ids[40]]);
  let broken = true;
  const errors = [];
  const handler = async (rows, client) => {
    for (const r of rows) {
      if (broken && failing.has(r.id)) throw new Error(`cannot handle ${r.id}`);
      await client.query('INSERT INTO nr_done VALUES ($1::hlculid)', [r.id]);
    }
  };
  const consumer = new Consumer(config, 'nr_ev', 'nr_main', {
    Client: pg.Client, batchSize: 25, maxAttempts: 2, retryDelay: 0, waitTimeout: 5,
    onError: (row, e, scheduled) => errors.push([row.id, scheduled]),
  });
  const running = consumer.run(handler);
  assert.ok(await until(async () => consumer.deadLettered === 3), `retried ${consumer.retried}, dead ${consumer.deadLettered}`);
  consumer.stop();
  await running;
  const handled = (await db.query('SELECT id::text FROM nr_done')).rows.map((r) => r.id).sort();
  assert.deepStrictEqual(handled, ids.filter((i) => !failing.has(i)).sort());
  const dead = (await db.query("SELECT id::text, attempts FROM hlculid.hlculid_dead_letters WHERE consumer = 'nr_main' ORDER BY id")).rows;
  assert.deepStrictEqual(dead.map((d) => d.id), [...failing].sort());
  assert.ok(dead.every((d) => d.attempts === 2), JSON.stringify(dead));
  assert.deepStrictEqual(errors.filter((e) => e[1]).map((e) => e[0]).sort(), [...failing].sort());
  assert.deepStrictEqual(errors.filter((e) => !e[1]).map((e) => e[0]).sort(), [...failing].sort());
  broken = false;
  assert.strictEqual(Number((await db.query("SELECT hlculid_dead_letter_requeue('nr_main') AS n")).rows[0].n), 3);
  const again = new Consumer(config, 'nr_ev', 'nr_main', { Client: pg.Client });
  assert.strictEqual(await again.runOnce(handler), 3);
  assert.ok(typeof again.lag === 'number' && again.lag >= 0, `lag ${again.lag}`);
  await again.close();
  assert.strictEqual(Number((await db.query('SELECT count(*) AS n FROM nr_done')).rows[0].n), 60);
}

async function stopping(db) {
  await db.query('DROP TABLE IF EXISTS ns_ev, ns_done');
  await db.query('CREATE TABLE ns_ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)');
  await db.query('CREATE TABLE ns_done (id hlculid)');
  const idle = new Consumer(config, 'ns_ev', 'ns_idle', { Client: pg.Client, waitTimeout: 30 });
  const idleRun = idle.run(async () => {});
  await sleep(500);
  const t0 = Date.now();
  idle.stop();
  await idleRun;
  assert.ok(Date.now() - t0 < 2000, `stop() took ${Date.now() - t0} ms`);
  let inBatch = false;
  const busy = new Consumer(config, 'ns_ev', 'ns_busy', { Client: pg.Client, waitTimeout: 30 });
  const busyRun = busy.run(async (rows, client) => {
    inBatch = true;
    await sleep(500);
    await client.query('INSERT INTO ns_done SELECT unnest($1::text[])::hlculid', [rows.map((r) => r.id)]);
  });
  await db.query('INSERT INTO ns_ev (n) SELECT g FROM generate_series(1, 10) g');
  assert.ok(await until(async () => inBatch));
  busy.stop();
  await busyRun;
  assert.strictEqual(Number((await db.query('SELECT count(*) AS n FROM ns_done')).rows[0].n), 10);
  const { rows } = await db.query("SELECT position::text = (SELECT max(id)::text FROM ns_ev) AS moved FROM hlculid.hlculid_consumers WHERE consumer = 'ns_busy'");
  assert.strictEqual(rows[0].moved, true, 'the stopped batch did not commit');
}

async function lag(db) {
  await db.query('DROP TABLE IF EXISTS nl_ev');
  await db.query('CREATE TABLE nl_ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)');
  await db.query("INSERT INTO nl_ev (id, n) SELECT hlculid_generate_at(now() - interval '1 hour'), g FROM generate_series(1, 5) g");
  const c = new Consumer(config, 'nl_ev', 'nl_main', { Client: pg.Client, batchSize: 2 });
  assert.strictEqual(c.lag, null);
  assert.strictEqual(await c.runOnce(async () => {}), 2);
  assert.ok(c.lag > 3590 && c.lag < 3610, `lag ${c.lag}`); // a full batch of hour-old rows
  assert.strictEqual(await c.runOnce(async () => {}), 2);
  assert.strictEqual(await c.runOnce(async () => {}), 1);
  assert.strictEqual(c.lag, 0); // caught up
  await c.close();
}

async function main() {
  const db = await connect();
  try {
    await lateCommits(db);
    await failingRows(db);
    await stopping(db);
    await lag(db);
  } finally {
    await db.end();
  }
  console.log('node consumer: ok');
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
