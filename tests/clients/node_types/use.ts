// A typed use of the hlculid package, checked with `tsc --noEmit` against its declarations
// (tests/clients/test_packages.py, in a project the packed tarball was installed into).
import { pgTable, integer } from 'drizzle-orm/pg-core';
import {
  Generator, HlculidError, canonical, minOf, maxOf, format, register, parseBigint, bigintFields,
  bigintToHlculid, hlculidToBigint, toUuidv7, fromUuidv7, DEFAULT_MAX_SKEW_MS, Mask, siphash24, Consumer,
} from 'hlculid';
import { hlculid, inRange } from 'hlculid/drizzle';

let now = 1_780_000_000_000;
const gen = new Generator(7, { maxSkewMs: DEFAULT_MAX_SKEW_MS, now: () => now, sleep: (ms) => { now += ms; }, random: () => 42 });
const id: string = gen.generate();
const big: string = gen.generateBigint();
const h: string = gen.horizon();
try {
  gen.observe(id);
} catch (e) {
  if (e instanceof HlculidError && e.code === 'TooFarAhead') {
    const ahead: number | undefined = e.aheadMs;
    console.log(ahead);
  }
}
const n: bigint = parseBigint(big);
const f: { ms: number; counter: number; publisher: number; date: Date } = bigintFields(big);
const texts: string[] = [canonical(id), minOf(new Date()), maxOf(new Date()), format(new Uint8Array(16)),
  bigintToHlculid(n), hlculidToBigint(h), fromUuidv7(toUuidv7(id))];
const waits: number = gen.waits;
const mask = new Mask('000102030405060708090a0b0c0d0e0f');
const masked: string[] = [mask.mask(id), mask.unmask(mask.mask(id)), mask.maskBigint(big),
  mask.unmaskBigint(BigInt(mask.maskBigint(n))), new Mask(new Uint8Array(16)).mask(h),
  mask.fromV4Facade(mask.toV4Facade(id))];
const value: bigint = mask.unmaskValue(mask.maskValue(1n)) ^ siphash24(new Uint8Array(16), new Uint8Array(0));

const events = pgTable('events', {
  id: hlculid('id').primaryKey(),
  orderId: hlculid('order_id', { mode: 'bigint' }),
  n: integer('n').notNull(),
});
const window = inRange(events.id, new Date(0), new Date(), '[]');
const oid: Promise<number> = register({ query: async () => ({ rows: [] }) }, {
  getTypeParser: () => (v: string) => v,
  setTypeParser: () => undefined,
});
const consumer = new Consumer('postgres://localhost/app', 'events', 'mailer', { batchSize: 100, retryDelay: 30,
  onError: (row, error, scheduled: boolean) => console.log(row, error, scheduled) });
const running: Promise<void> = consumer.run(async (rows, client) => {
  for (const r of rows) await client.query('INSERT INTO outbox (event_id) VALUES ($1)', [r.id]);
}, { signals: true });
const lag: number | null = consumer.lag;
consumer.stop();
console.log(texts, f, waits, window, oid, events.id.name, masked, value, running, lag);
