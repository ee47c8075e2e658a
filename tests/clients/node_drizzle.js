// The Drizzle ORM recipe (clients/node/hlculid-drizzle.js) against a real server: a pgTable whose
// key is an hlculid column with the server default, 10,000 ids made by the server and 10,000 by
// the client's Generator, read back as canonical strings in order, their bytes checked against
// the server's extractors; a time window with bound ids (between, and gte/lte); lookups with eq
// and inArray by string ids; the bigint mode the same way. The schema is plain SQL (no
// drizzle-kit). Run by tests/clients/test_node.py with HLCULID_TEST_* set.
'use strict';
const path = require('path');
const assert = require('assert');
const { createRequire } = require('module');
const recipe = path.join(__dirname, '..', '..', 'clients', 'node');
const fromRecipe = createRequire(path.join(recipe, 'package.json'));
const pg = fromRecipe('pg');
const { drizzle } = fromRecipe('drizzle-orm/node-postgres');
const { sql, eq, and, between, gte, lte, inArray } = fromRecipe('drizzle-orm');
const { pgTable, integer, text } = fromRecipe('drizzle-orm/pg-core');
const { hlculid, inRange } = require(path.join(recipe, 'hlculid-drizzle.js'));
const {
  Generator, minOf, maxOf, bigintFields, bigintMinOf, bigintMaxOf,
} = require(path.join(recipe, 'hlculid.js'));

const N = 10000;
const CANONICAL = /^[0-9A-F]{12}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;
// the fields as the canonical string lays them out: ms-counter-publisher-random
const msOf = (id) => parseInt(id.slice(0, 12), 16);
const publisherOf = (id) => parseInt(id.slice(18, 22), 16);
const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const events = pgTable('drizzle_events', {
  id: hlculid('id').primaryKey().default(sql`hlculid_generate()`),
  n: integer('n').notNull(),
  source: text('source').notNull(),
});
const bigEvents = pgTable('drizzle_big_events', {
  id: hlculid('id', { mode: 'bigint' }).primaryKey().default(sql`hlculid_generate_bigint()`),
  n: integer('n').notNull(),
});

// Busy-waits until the wall clock is past the millisecond of id, so the next id the Generator
// makes is in a later millisecond (the windows below have sharp edges).
function waitPast(ms) {
  while (Date.now() <= ms) { /* at most a millisecond or two */ }
}

async function columnTypes() {
  assert.strictEqual(events.id.getSQLType(), 'hlculid');
  assert.strictEqual(bigEvents.id.getSQLType(), 'bigint');
  assert.throws(() => hlculid('id', { mode: 'number' }), TypeError);
  // parameters are checked and made canonical in the client; a Number bigint id is refused
  assert.throws(() => events.id.mapToDriverValue('not an id'), /invalid hlculid/);
  assert.throws(() => bigEvents.id.mapToDriverValue(5), TypeError);
  assert.throws(() => bigEvents.id.mapFromDriverValue(5), TypeError);
}

async function serverDefaultIds(db) {
  const made = await db.insert(events)
    .values(Array.from({ length: N }, (_, i) => ({ n: i + 1, source: 'server' })))
    .returning({ id: events.id, n: events.n });
  assert.strictEqual(made.length, N);
  const rows = await db.select({
    id: events.id, n: events.n, text: sql`${events.id}::text`,
    ms: sql`(extract(epoch FROM hlculid_ts(${events.id})) * 1000)::int8`.mapWith(Number),
    publisher: sql`hlculid_publisher(${events.id})`.mapWith(Number),
  }).from(events).where(eq(events.source, 'server')).orderBy(events.id);
  // one statement's ids increase in the order the rows were made
  assert.deepStrictEqual(rows.map((r) => r.n), made.map((_, i) => i + 1));
  assert.deepStrictEqual(rows.map((r) => r.id), [...made].sort(byId).map((r) => r.id));
  for (const r of rows) {
    assert.match(r.id, CANONICAL);
    assert.strictEqual(r.id, r.text);
    assert.deepStrictEqual([msOf(r.id), publisherOf(r.id)], [r.ms, 50]);
    assert.strictEqual(r.publisher, 50);
  }
}

async function clientIdsAndWindow(db) {
  const gen = new Generator(54);
  const batch = (size, source) => Array.from({ length: size }, (_, i) => ({ id: gen.generate(), n: i + 1, source }));
  // three batches in three disjoint spans of milliseconds: the window is the middle one's
  const a = batch(3000, 'a');
  waitPast(msOf(a[a.length - 1].id));
  const b = batch(4000, 'b');
  waitPast(msOf(b[b.length - 1].id));
  const c = batch(N - 7000, 'c');
  const mine = [...a, ...b, ...c];
  for (let i = 1; i < N; i++) assert.ok(mine[i - 1].id < mine[i].id, 'client ids increase');
  await db.insert(events).values(mine);

  const back = await db.select({
    id: events.id, n: events.n, source: events.source,
    ms: sql`(extract(epoch FROM hlculid_ts(${events.id})) * 1000)::int8`.mapWith(Number),
    publisher: sql`hlculid_publisher(${events.id})`.mapWith(Number),
  }).from(events).where(inArray(events.source, ['a', 'b', 'c'])).orderBy(events.id);
  assert.deepStrictEqual(back.map(({ id, n, source }) => ({ id, n, source })), mine);
  for (const r of back) assert.deepStrictEqual([r.ms, r.publisher], [msOf(r.id), 54]);

  // the window from the first to the last millisecond of batch b, as bound parameters: exactly
  // the rows of the table made in it (the server's rows are earlier, but are counted if not),
  // in the client's order
  const from = new Date(msOf(b[0].id));
  const to = new Date(msOf(b[b.length - 1].id));
  const all = await db.select({ id: events.id, source: events.source }).from(events);
  const expected = all.filter((r) => msOf(r.id) >= from.getTime() && msOf(r.id) <= to.getTime())
    .sort(byId).map((r) => r.id);
  assert.deepStrictEqual(expected.filter((id) => publisherOf(id) === 54), b.map((r) => r.id));
  // the recipe: inRange, `id <@ tstzrange(from, to, '[]')`, which the planner estimates
  const query = db.select({ id: events.id }).from(events)
    .where(inRange(events.id, from, to, '[]')).orderBy(events.id);
  const { sql: statement, params } = query.toSQL();
  assert.match(statement, /<@ tstzrange\(\$1::timestamptz, \$2::timestamptz, \$3\)/);
  assert.deepStrictEqual(params, [from.toISOString(), to.toISOString(), '[]']);
  assert.deepStrictEqual((await query).map((r) => r.id), expected);
  // '[)' (the default) leaves out the last millisecond
  const halfOpen = await db.select({ id: events.id }).from(events).where(inRange(events.id, from, to)).orderBy(events.id);
  assert.deepStrictEqual(halfOpen.map((r) => r.id), expected.filter((id) => msOf(id) < to.getTime()));
  assert.throws(() => inRange(events.id, from, to, '[['), /range bounds/);
  const between_ = await db.select({ id: events.id }).from(events)
    .where(between(events.id, minOf(from), maxOf(to))).orderBy(events.id);
  assert.deepStrictEqual(between_.map((r) => r.id), expected);
  const closed = await db.select({ id: events.id }).from(events)
    .where(and(gte(events.id, minOf(from)), lte(events.id, maxOf(to)))).orderBy(events.id);
  assert.deepStrictEqual(closed.map((r) => r.id), expected);

  // client-made ids through Drizzle's own default hook
  const hooked = [];
  const withClientDefault = pgTable('drizzle_events', {
    id: hlculid('id').primaryKey().$defaultFn(() => { const id = gen.generate(); hooked.push(id); return id; }),
    n: integer('n').notNull(),
    source: text('source').notNull(),
  });
  await db.insert(withClientDefault).values([1, 2, 3].map((n) => ({ n, source: 'hook' })));
  const hookedBack = await db.select({ id: events.id }).from(events)
    .where(eq(events.source, 'hook')).orderBy(events.id);
  assert.strictEqual(hooked.length, 3);
  assert.deepStrictEqual(hookedBack.map((r) => r.id), hooked);
  return mine;
}

async function lookups(db, mine) {
  const { id, n, source } = mine[1234];
  assert.deepStrictEqual(await db.select({ n: events.n, source: events.source }).from(events)
    .where(eq(events.id, id)), [{ n, source }]);
  // any text form the server reads: canonical in the parameter
  for (const form of [id.toLowerCase(), id.replace(/-/g, '')]) {
    assert.deepStrictEqual(await db.select({ id: events.id }).from(events).where(eq(events.id, form)), [{ id }]);
  }
  // a string in a raw sql template is an untyped parameter too: no cast needed
  const { rows } = await db.execute(sql`SELECT n FROM drizzle_events WHERE id = ${id}`);
  assert.deepStrictEqual(rows, [{ n }]);
  const few = [mine[9], mine[5000], mine[1]].map((r) => r.id);
  const found = await db.select({ id: events.id }).from(events).where(inArray(events.id, few)).orderBy(events.id);
  assert.deepStrictEqual(found.map((r) => r.id), [...few].sort());
  // an update and a delete by id
  await db.update(events).set({ n: -1 }).where(eq(events.id, mine[0].id));
  const [gone] = await db.delete(events).where(eq(events.id, mine[0].id)).returning({ n: events.n });
  assert.deepStrictEqual(gone, { n: -1 });
}

async function bigintMode(db) {
  const made = await db.insert(bigEvents)
    .values(Array.from({ length: N }, (_, i) => ({ n: i + 1 })))
    .returning({ id: bigEvents.id });
  waitPast(Math.max(...made.map((r) => bigintFields(r.id).ms))); // the client's ids come after
  const gen = new Generator(62);
  const start = new Date(Date.now() - 1);
  const mine = Array.from({ length: N }, (_, i) => ({ id: gen.generateBigint(), n: N + i + 1 }));
  const end = new Date(Date.now() + 1);
  // a BigInt goes in too
  await db.insert(bigEvents).values(mine.map((r, i) => (i % 2 ? r : { ...r, id: BigInt(r.id) })));
  const back = await db.select({
    id: bigEvents.id, n: bigEvents.n, text: sql`${bigEvents.id}::text`,
    publisher: sql`hlculid_bigint_publisher(${bigEvents.id})`.mapWith(Number),
  }).from(bigEvents).orderBy(bigEvents.id);
  assert.strictEqual(back.length, 2 * N);
  for (const r of back) {
    assert.strictEqual(typeof r.id, 'string');
    assert.strictEqual(r.id, r.text);
    assert.strictEqual(bigintFields(r.id).publisher, r.publisher);
  }
  // server ids first (made earlier), in the order made; then the client's, equal
  assert.deepStrictEqual(back.map((r) => r.n), Array.from({ length: 2 * N }, (_, i) => i + 1));
  assert.deepStrictEqual(back.slice(0, N).map((r) => r.id).sort(), made.map((r) => r.id).sort());
  assert.deepStrictEqual(back.slice(N).map(({ id, n }) => ({ id, n })), mine);
  const window = await db.select({ id: bigEvents.id }).from(bigEvents)
    .where(between(bigEvents.id, bigintMinOf(start), bigintMaxOf(end))).orderBy(bigEvents.id);
  assert.deepStrictEqual(window.map((r) => r.id),
    back.filter((r) => bigintFields(r.id).ms >= start.getTime() && bigintFields(r.id).ms <= end.getTime()).map((r) => r.id));
  assert.ok(window.length >= N);
  for (const id of [mine[77].id, BigInt(mine[77].id)]) {
    assert.deepStrictEqual(await db.select({ n: bigEvents.n }).from(bigEvents).where(eq(bigEvents.id, id)), [{ n: mine[77].n }]);
  }
}

async function main() {
  const client = new pg.Client({
    host: process.env.HLCULID_TEST_HOST, port: Number(process.env.HLCULID_TEST_PORT),
    user: 'postgres', database: 'postgres',
  });
  await client.connect();
  try {
    const db = drizzle({ client });
    await db.execute(sql.raw(`
      DROP TABLE IF EXISTS drizzle_events, drizzle_big_events;
      CREATE TABLE drizzle_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int NOT NULL, source text NOT NULL);
      CREATE TABLE drizzle_big_events (id bigint PRIMARY KEY DEFAULT hlculid_generate_bigint(), n int NOT NULL)`));
    await columnTypes();
    await serverDefaultIds(db);
    const mine = await clientIdsAndWindow(db);
    await lookups(db, mine);
    await bigintMode(db);
    console.log('node drizzle: ok');
  } finally {
    await client.end();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
