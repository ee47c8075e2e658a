// hlculid for Drizzle ORM (drizzle-orm/pg-core, with node-postgres): a column type whose values
// are canonical strings, as hlculid.js gives them (`require('hlculid/drizzle')`, or import). Parameters take any
// text form the server reads (checked and made canonical here, so a bad id throws before a round
// trip); node-postgres sends them untyped, so `eq(t.id, '...')` needs no cast. Results are the
// server's text output, canonical already: nothing to register.
//
//   const events = pgTable('events', {
//     id: hlculid('id').primaryKey().default(sql`hlculid_generate()`),
//   });
//   hlculid('id', { mode: 'bigint' })  // a bigint id column: decimal strings, never a Number
//   db.select().from(events).where(inRange(events.id, from, to))  // a time window: id <@ tstzrange
'use strict';
const { sql } = require('drizzle-orm');
const { customType } = require('drizzle-orm/pg-core');
const { canonical, parseBigint } = require('./hlculid.js');

const wide = customType({
  dataType: () => 'hlculid',
  toDriver: (value) => canonical(value),
});

// bigint ids as decimal strings (node-postgres's default for int8; a BigInt parameter works too).
// Reading through parseBigint refuses a Number, which a global int8 parser to Number would make of
// ids above 2^53 after rounding them.
const narrow = customType({
  dataType: () => 'bigint',
  toDriver: (value) => parseBigint(value).toString(),
  fromDriver: (value) => parseBigint(value).toString(),
});

// hlculid(), hlculid('col'), hlculid({ mode }), hlculid('col', { mode }): mode 'string' (the
// default, an hlculid column) or 'bigint' (a bigint column of bigint ids). customType's mappings
// do not see the column's config, hence two types behind one name.
function hlculid(a, b) {
  const config = typeof a === 'object' && a !== null ? a : b;
  const mode = config && config.mode !== undefined ? config.mode : 'string';
  if (mode === 'string') return wide(a, b);
  if (mode === 'bigint') return narrow(a, b);
  throw new TypeError(`hlculid column mode ${JSON.stringify(mode)}: use 'string' or 'bigint'`);
}

// A time window as the planner estimates it and turns into index conditions on the key:
// `column <@ tstzrange(from, to, bounds)` (bounds '[)' by default: from included, to not).
// `between(column, minOf(from), maxOf(to))` is misestimated (a window narrower than a histogram
// bucket counts as one row).
const BOUNDS = new Set(['[)', '[]', '(]', '()']);
function inRange(column, from, to, bounds = '[)') {
  if (!BOUNDS.has(bounds)) throw new TypeError(`range bounds ${JSON.stringify(bounds)}: use '[)', '[]', '(]' or '()'`);
  const ts = (v) => (v instanceof Date ? v.toISOString() : v);
  return sql`${column} <@ tstzrange(${ts(from)}::timestamptz, ${ts(to)}::timestamptz, ${bounds})`;
}

module.exports = { hlculid, inRange };
