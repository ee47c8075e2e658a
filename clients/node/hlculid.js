// hlculid for Node.js with node-postgres (pg): ids as canonical strings (as pg gives uuids), and
// a client-side generator with the server's clock rule. One file, no dependency beyond pg; copy
// it into a project. Results in text (pg's default): node-postgres 8 decodes row values as UTF-8
// even in binary mode, which garbles the 16 raw bytes.
'use strict';
const crypto = require('crypto');

// 16 bytes -> "017FC21C5E7A-0000-000A-AAA111111111"
function format(buf) {
  const h = Buffer.from(buf).toString('hex').toUpperCase();
  return `${h.slice(0, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// Any text form the server accepts -> the canonical string; exactly the server's forms (see
// tests/data/text_forms.json): 12-4-4-12 hex, 32 hex digits, 8-4-4-4-12, or a 26-character
// ULID (Crockford base32 without the I/L/O aliases, first character 0-7), in any letter case.
// Nothing else: no white space, braces, prefixes or non-ASCII look-alikes.
const HEX_FORM = /^(?:[0-9A-Fa-f]{12}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|[0-9A-Fa-f]{32}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$/;
const ULID_FORM = /^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$/;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
function canonical(text) {
  if (typeof text === 'string' && HEX_FORM.test(text)) {
    const buf = Buffer.from(text.replace(/-/g, ''), 'hex');
    // the uuid spelling of a random uuid: refused, as the server's input and uuid cast do
    if (text.length === 36 && buf[6] >> 4 === 4 && (buf[8] & 0xc0) === 0x80) {
      throw new Error(`invalid hlculid ${JSON.stringify(text)}: a random uuid (version 4 with the RFC 9562 variant) is not an hlculid`);
    }
    return format(buf);
  }
  if (typeof text === 'string' && ULID_FORM.test(text)) {
    let v = 0n;
    for (const c of text.toUpperCase()) v = (v << 5n) | BigInt(CROCKFORD.indexOf(c));
    return format(Buffer.from(v.toString(16).padStart(32, '0'), 'hex'));
  }
  throw new Error(`invalid hlculid ${JSON.stringify(text)}`);
}

// The smallest and largest ids of the millisecond of a Date, for time-window queries.
function minOf(date) {
  return format(Buffer.concat([msBytes(date.getTime()), Buffer.alloc(10, 0)]));
}
function maxOf(date) {
  return format(Buffer.concat([msBytes(date.getTime()), Buffer.alloc(10, 0xff)]));
}
function msBytes(ms) {
  const b = Buffer.alloc(6);
  b.writeUIntBE(ms, 0, 6);
  return b;
}

// Makes hlculid columns (and hlculid[] arrays) parse to canonical strings. The type's OID differs
// per database, so it is looked up once per database.
async function register(client, types) {
  const { rows } = await client.query(
    "SELECT 'hlculid'::regtype::oid AS oid, 'hlculid[]'::regtype::oid AS array_oid");
  const oid = Number(rows[0].oid);
  const parseArray = types.getTypeParser(2951); // uuid[]: the same text shape
  types.setTypeParser(oid, 'text', (text) => text);
  types.setTypeParser(Number(rows[0].array_oid), 'text', (text) => parseArray(text).map(canonical));
  return oid;
}

// -- bigint ids ----------------------------------------------------------------------------------
const BIGINT_MAX_MS = (1n << 42n) - 1n; // 2109-05-15 07:35:11.103 UTC
const BIGINT_COUNTER_VALUES = 1n << 11n; // ids a millisecond per publisher
const BIGINT_MAX_PUBLISHER = 1023;
const I64_MAX = (1n << 63n) - 1n;
// The canonical decimal form only (tests/data/bigint_forms.json): BigInt() alone would also
// take white space, 0x/0o/0b prefixes and '' (as 0n).
const DECIMAL_FORM = /^(?:0|[1-9][0-9]*)$/;

// A bigint id (decimal string or BigInt) -> BigInt, checked to be an id (0 to 2^63 - 1).
function parseBigint(id) {
  let v;
  if (typeof id === 'bigint') {
    v = id;
  } else if (typeof id === 'string' && DECIMAL_FORM.test(id)) {
    v = BigInt(id);
    if (v > I64_MAX) throw new RangeError(`invalid bigint id ${JSON.stringify(id)}: a bigint id is at most ${I64_MAX}`);
  } else if (typeof id === 'string') {
    throw new Error(`invalid bigint id ${JSON.stringify(id)}: a bigint id is written in decimal digits, without sign, white space or leading zeros`);
  } else {
    throw new TypeError(`a bigint id is a decimal string or a BigInt, not ${typeof id}` +
      (typeof id === 'number' ? ' (a Number cannot hold ids above 2^53 exactly)' : ''));
  }
  if (v < 0n || v > I64_MAX) throw new RangeError(`bigint id ${v} is out of range (0 to ${I64_MAX})`);
  return v;
}

// Fields -> the id's decimal string; each must fit (ms 0 to 2^42 - 1, counter 0 to 2047,
// publisher 0 to 1023).
function bigintFromFields(ms, counter, publisher) {
  for (const [name, v, top] of [['timestamp (ms)', ms, BIGINT_MAX_MS],
    ['counter', counter, BIGINT_COUNTER_VALUES - 1n], ['publisher', publisher, BigInt(BIGINT_MAX_PUBLISHER)]]) {
    if (!(Number.isSafeInteger(v) || typeof v === 'bigint') || BigInt(v) < 0n || BigInt(v) > top) {
      throw new RangeError(`${name} ${v} does not fit a bigint id (0 to ${top})`);
    }
  }
  return ((BigInt(ms) << 21n) | (BigInt(counter) << 10n) | BigInt(publisher)).toString();
}

// A bigint id -> { ms, counter, publisher, date } (Numbers: each fits one exactly), as
// hlculid_bigint_decode gives them.
function bigintFields(id) {
  const v = parseBigint(id);
  const ms = Number(v >> 21n);
  return {
    ms, counter: Number((v >> 10n) & 2047n), publisher: Number(v & 1023n), date: new Date(ms),
  };
}

// The smallest and largest bigint ids of the millisecond of a Date, as hlculid_bigint_min/max.
function bigintMinOf(date) {
  return bigintFromFields(dateMs(date), 0, 0);
}
function bigintMaxOf(date) {
  return bigintFromFields(dateMs(date), 2047, BIGINT_MAX_PUBLISHER);
}
function dateMs(date) {
  const ms = date instanceof Date ? date.getTime() : NaN;
  if (Number.isNaN(ms)) throw new TypeError('a time-window bound is a valid Date');
  return ms;
}

// A bigint id -> the 128-bit id with the same time, counter and publisher and random bits 0, as
// hlculid_from_bigint: it sorts among 128-bit ids where the bigint id's clock value lies.
function bigintToHlculid(id) {
  const { ms, counter, publisher } = bigintFields(id);
  const buf = Buffer.alloc(16);
  buf.writeUIntBE(ms, 0, 6);
  buf.writeUInt16BE(counter, 6);
  buf.writeUInt16BE(publisher, 8);
  return format(buf);
}

// A 128-bit id (any text form) -> the bigint id with its time, counter and publisher (random
// bits dropped), as hlculid_to_bigint; a RangeError when one does not fit.
function hlculidToBigint(id) {
  const buf = Buffer.from(canonical(id).replace(/-/g, ''), 'hex');
  try {
    return bigintFromFields(buf.readUIntBE(0, 6), buf.readUInt16BE(6), buf.readUInt16BE(8));
  } catch (e) {
    throw new RangeError(`hlculid ${canonical(id)} does not fit a bigint id: ${e.message}`);
  }
}

// The clock of the server and of the crate's Generator, in this process (in memory only), checked
// id by id against the crate (tests/data/clock_scenario.json):
// - generate: L = max(L + 1, now_ms << 16): ids increase strictly even when the wall clock steps
//   back, and a counter past 0xFFFF carries into the next millisecond;
// - the run-ahead bound: generation never pushes the clock more than maxSkewMs beyond the wall
//   clock (or beyond where an observe or a backward step of the wall clock put it); at the bound,
//   generate() waits for the wall clock (synchronous sleeps of 1 to 10 ms);
// - observe: L = max(L, remote), refused (HlculidError 'TooFarAhead', clock unchanged) for an id
//   further ahead of the wall clock than maxSkewMs, and ('RandomUuid') for a random uuid.
// L is held as two Numbers (ms and counter), so the hot path makes no BigInt; the random bits
// come from a pooled buffer refilled with crypto.randomFillSync in blocks, and the text is built
// from a byte -> hex table, as crypto.randomUUID() does. Options: maxSkewMs (default 500, the
// server's), and for tests and simulations now (Unix ms), sleep (ms) and random (48 bits as a
// Number, one call per 128-bit id) in place of the system's.
const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));
const MAX_MS = 0xffffffffffff; // 10889-08-02 05:31:50.655 UTC, the last millisecond an id holds
const DEFAULT_MAX_SKEW_MS = 500; // the server's hlculid.max_clock_skew, the crate's DEFAULT_MAX_SKEW
// The crate's clock::EXHAUSTED, 2^64 - 2^40 - 1, as (ms, counter): no value at or above it; an
// in-memory generator has reserved every value below it.
const EXHAUSTED_MS = 0xfffffeffffff;
const BACKWARD_STEP_THRESHOLD_MS = 10; // a smaller step back of the wall clock is not a step
const POOL_IDS = 1024; // random draws per refill (6 bytes each)

// Why a Generator made no id or refused an observed one: `code` is the crate's
// hlculid_core::Error variant (the same cases, the same meaning); nothing changed.
// 'WallClockOutOfRange', 'Exhausted', 'TooFarAhead' (with aheadMs), 'RandomUuid',
// 'PublisherTooWideForBigint' (with publisher), 'BigintTimeOutOfRange'.
class HlculidError extends RangeError {
  constructor(code, message, fields = {}) {
    super(message);
    this.name = 'HlculidError';
    this.code = code;
    Object.assign(this, fields);
  }
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function systemMs() {
  return Math.max(Date.now(), 0);
}

class Generator {
  constructor(publisher, options = {}) {
    if (!(Number.isInteger(publisher) && publisher >= 0 && publisher <= 0xffff)) {
      throw new Error('publisher must be 0..65535');
    }
    const maxSkewMs = options.maxSkewMs === undefined ? DEFAULT_MAX_SKEW_MS : options.maxSkewMs;
    if (!(Number.isSafeInteger(maxSkewMs) && maxSkewMs >= 0)) {
      throw new RangeError('maxSkewMs must be a whole number of ms, 0 or more');
    }
    this.publisher = publisher;
    this.maxSkewMs = maxSkewMs;
    this._runAhead = Math.min(maxSkewMs, MAX_MS);
    this._now = options.now || systemMs;
    this._sleep = options.sleep || sleepSync;
    this._random = options.random || null;
    this._ms = 0; // L >> 16, with L = 0 before the first id
    this._counter = 0; // L & 0xFFFF
    this._lastWall = 0; // the latest wall clock reading, in ms
    this._anchorMs = 0; // where an observe or a backward step put the clock (as ms, counter):
    this._anchorCounter = 0; // the bound counts from it
    this.waits = 0; // calls that waited at the run-ahead bound
    this.backwardSteps = 0; // steps back of the wall clock of more than 10 ms seen
    this._prefix = ''; // "MMMMMMMMMMMM-" of this._ms, remade when the millisecond changes
    this._setMs(0);
    this._publisherText = `-${HEX_BYTE[publisher >> 8]}${HEX_BYTE[publisher & 0xff]}-`;
    this._pool = Buffer.alloc(6 * POOL_IDS);
    this._at = this._pool.length; // empty: filled on first use
  }
  // One step of the clock (the crate's SharedClock::take for one value whose counter is below
  // counterValues, with its wait at the bound): sets this._ms/_counter to the next L.
  _tick(counterValues) {
    for (let waited = false; ;) {
      const now = Math.floor(this._now()); // whole ms, also from an injected clock
      if (!(now >= 1 && now <= MAX_MS)) {
        throw new HlculidError('WallClockOutOfRange', `the system clock (${now} ms) is outside hlculid's time range`);
      }
      const seen = this._lastWall;
      if (now > seen) {
        this._lastWall = now;
      } else if (seen - now > BACKWARD_STEP_THRESHOLD_MS) {
        // a step back: the bound counts from the clock before it, so ids go on unpaced
        const [am, ac] = seen > EXHAUSTED_MS ? [EXHAUSTED_MS, 0xffff] : [seen, 0];
        if (am > this._anchorMs || (am === this._anchorMs && ac > this._anchorCounter)) {
          this._anchorMs = am;
          this._anchorCounter = ac;
        }
        this._lastWall = now;
        this.backwardSteps++;
      }
      if (this._ms > EXHAUSTED_MS || (this._ms === EXHAUSTED_MS && this._counter === 0xffff)) {
        throw new HlculidError('Exhausted', 'the hlculid clock is exhausted');
      }
      // first = max(L + 1, min(now << 16, EXHAUSTED)), moved to the next ms past counterValues
      let ms = this._ms;
      let counter = this._counter + 1;
      if (counter > 0xffff) {
        ms += 1;
        counter = 0;
      }
      const [wm, wc] = now > EXHAUSTED_MS ? [EXHAUSTED_MS, 0xffff] : [now, 0];
      if (wm > ms || (wm === ms && wc > counter)) {
        ms = wm;
        counter = wc;
      }
      if (counter >= counterValues) {
        ms += 1;
        counter = 0;
      }
      const boundMs = Math.max(this._anchorMs, now) + this._runAhead;
      if (ms > boundMs) {
        if (!waited) {
          waited = true;
          this.waits++;
        }
        const wait = Math.max(Math.max(ms - this._runAhead, 0) - now, 1);
        this._sleep(Math.min(wait, 10));
        continue;
      }
      if (ms > EXHAUSTED_MS || (ms === EXHAUSTED_MS && counter > 0xfffe)) {
        throw new HlculidError('Exhausted', 'the hlculid clock is exhausted');
      }
      if (ms !== this._ms) this._setMs(ms);
      this._counter = counter;
      return;
    }
  }
  _setMs(ms) {
    this._ms = ms;
    const hi = Math.floor(ms / 0x1000000);
    const lo = ms % 0x1000000;
    this._prefix = `${HEX_BYTE[hi >> 16]}${HEX_BYTE[(hi >> 8) & 0xff]}${HEX_BYTE[hi & 0xff]}` +
      `${HEX_BYTE[lo >> 16]}${HEX_BYTE[(lo >> 8) & 0xff]}${HEX_BYTE[lo & 0xff]}-`;
  }
  // The next id, as its canonical string: greater than every id this generator returned before.
  generate() {
    this._tick(0x10000);
    const c = this._counter;
    const head = this._prefix + HEX_BYTE[c >> 8] + HEX_BYTE[c & 0xff] + this._publisherText;
    if (this._random) {
      const r = this._random();
      const hi = Math.floor(r / 0x1000000) & 0xffffff;
      const lo = r % 0x1000000;
      return head + HEX_BYTE[hi >> 16] + HEX_BYTE[(hi >> 8) & 0xff] + HEX_BYTE[hi & 0xff] +
        HEX_BYTE[lo >> 16] + HEX_BYTE[(lo >> 8) & 0xff] + HEX_BYTE[lo & 0xff];
    }
    let at = this._at;
    const pool = this._pool;
    if (at === pool.length) {
      crypto.randomFillSync(pool);
      at = 0;
    }
    this._at = at + 6;
    return head + HEX_BYTE[pool[at]] + HEX_BYTE[pool[at + 1]] + HEX_BYTE[pool[at + 2]] +
      HEX_BYTE[pool[at + 3]] + HEX_BYTE[pool[at + 4]] + HEX_BYTE[pool[at + 5]];
  }
  // A bigint id (decimal string) from the same clock, so the two widths are ordered against each
  // other (through bigintToHlculid): a clock value whose counter does not fit 11 bits moves to
  // the next millisecond, as on the server. 'PublisherTooWideForBigint' (nothing taken) for a
  // publisher over 1023; 'BigintTimeOutOfRange' past 2109-05-15 (as the crate, the clock moved).
  generateBigint() {
    if (this.publisher > BIGINT_MAX_PUBLISHER) {
      throw new HlculidError('PublisherTooWideForBigint', `publisher ${this.publisher} does not fit a bigint id: a bigint id holds a publisher of 0 to ${BIGINT_MAX_PUBLISHER}; make bigint ids with a Generator whose publisher is in that range`, { publisher: this.publisher });
    }
    this._tick(Number(BIGINT_COUNTER_VALUES));
    if (this._ms > Number(BIGINT_MAX_MS)) {
      throw new HlculidError('BigintTimeOutOfRange', 'the clock is past 2109-05-15 07:35:11.103 UTC, the last millisecond a bigint id can hold; use 128-bit ids');
    }
    return bigintFromFields(this._ms, this._counter, this.publisher);
  }
  // The horizon an application publisher reports (hlculid_advance_horizon(publisher, horizon) on
  // the server): every id made before the call is below it, every id made after is at or above
  // it; the clock is first brought up to the wall clock, so an idle publisher's horizon moves.
  horizon() {
    this._tick(0x10000);
    let { _ms: ms, _counter: counter } = this;
    if (counter === 0xffff) {
      ms += 1;
      counter = 0;
    } else {
      counter += 1;
    }
    const hi = Math.floor(ms / 0x1000000);
    const lo = ms % 0x1000000;
    return `${HEX_BYTE[hi >> 16]}${HEX_BYTE[(hi >> 8) & 0xff]}${HEX_BYTE[hi & 0xff]}` +
      `${HEX_BYTE[lo >> 16]}${HEX_BYTE[(lo >> 8) & 0xff]}${HEX_BYTE[lo & 0xff]}-` +
      `${HEX_BYTE[counter >> 8]}${HEX_BYTE[counter & 0xff]}-0000-000000000000`;
  }
  // The receive rule: every id generated afterwards sorts after id (any text form). An id at or
  // below this generator's clock changes nothing and is always accepted. Refused with an
  // HlculidError, the clock unchanged: 'RandomUuid' (version 4 with the RFC 9562 variant),
  // 'TooFarAhead' (further ahead of the wall clock than maxSkewMs; aheadMs says how far), and
  // 'WallClockOutOfRange' while the wall clock reads outside the id range.
  observe(id) {
    let text;
    try {
      text = canonical(id);
    } catch (e) {
      // the uuid spelling of a random uuid, which the text input refuses: a RandomUuid too
      if (!(typeof id === 'string' && UUID_FORM.test(id))) throw e;
      text = id;
    }
    const buf = Buffer.from(text.replace(/-/g, ''), 'hex');
    if (buf[6] >> 4 === 4 && (buf[8] & 0xc0) === 0x80) {
      throw new HlculidError('RandomUuid', `${format(buf)} is a random uuid (version 4 with the RFC 9562 variant), not an hlculid; it was not observed`);
    }
    let ms = buf.readUIntBE(0, 6);
    let counter = buf.readUInt16BE(6);
    if (ms > EXHAUSTED_MS) [ms, counter] = [EXHAUSTED_MS, 0xffff];
    if (ms < this._ms || (ms === this._ms && counter <= this._counter)) return;
    const now = Math.floor(this._now());
    if (!(now >= 1 && now <= MAX_MS)) {
      throw new HlculidError('WallClockOutOfRange', `the system clock (${now} ms) is outside hlculid's time range`);
    }
    const aheadMs = Math.max(ms - now, 0);
    if (aheadMs > this.maxSkewMs) {
      throw new HlculidError('TooFarAhead', `the id is ${aheadMs} ms ahead of the local clock, more than the allowed skew of ${this.maxSkewMs} ms; it was not observed`, { aheadMs });
    }
    if (ms === EXHAUSTED_MS && counter > 0xfffe) {
      throw new HlculidError('Exhausted', 'the hlculid clock is exhausted');
    }
    if (ms > this._anchorMs || (ms === this._anchorMs && counter > this._anchorCounter)) {
      this._anchorMs = ms;
      this._anchorCounter = counter;
    }
    if (ms !== this._ms) this._setMs(ms);
    this._counter = counter;
  }
}

module.exports = {
  format, canonical, minOf, maxOf, register, Generator, HlculidError, DEFAULT_MAX_SKEW_MS,
  parseBigint, bigintFromFields, bigintFields, bigintMinOf, bigintMaxOf, bigintToHlculid, hlculidToBigint,
};

// The RFC 9562 version 7 uuid form (as hlculid_to_uuidv7 / hlculid_from_uuidv7 make and read
// it): the same millisecond, version 7, the counter's top 12 bits, the variant, the counter's low
// 4 bits, the publisher and the top 42 random bits. Keeps the order of ids; for validators and
// stores that accept only real uuids. An id in any text form -> a lower-case 8-4-4-4-12 string.
const V7_RAND_B = (1n << 62n) - 1n;
function toUuidv7(id) {
  const v = BigInt(`0x${canonical(id).replace(/-/g, '')}`);
  const rest = (v & ((1n << 80n) - 1n)) >> 6n; // counter, publisher, top 42 random bits
  const u = ((v >> 80n) << 80n) | (7n << 76n) | ((rest >> 62n) << 64n) | (2n << 62n) | (rest & V7_RAND_B);
  const h = u.toString(16).padStart(32, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
// A version 7 uuid (8-4-4-4-12, any case) -> the canonical id it stands for: exact time, counter
// and publisher, the lowest 6 random bits 0. Any RFC 9562 v7 uuid, in the same order; an Error
// for any other uuid.
const UUID_FORM = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
function fromUuidv7(u) {
  if (typeof u !== 'string' || !UUID_FORM.test(u)) throw new Error(`invalid uuid ${JSON.stringify(u)}`);
  const v = BigInt(`0x${u.replace(/-/g, '')}`);
  if (((v >> 76n) & 0xfn) !== 7n || ((v >> 62n) & 3n) !== 2n) {
    throw new Error(`uuid ${u} is not an RFC 9562 version 7 uuid`);
  }
  const rest = (((v >> 64n) & 0xfffn) << 62n) | (v & V7_RAND_B);
  return format(Buffer.from((((v >> 80n) << 80n) | (rest << 6n)).toString(16).padStart(32, '0'), 'hex'));
}
module.exports.toUuidv7 = toUuidv7;
module.exports.fromUuidv7 = fromUuidv7;

// -- masks ---------------------------------------------------------------------------------------
// Keyed, reversible masks for ids shown outside, as the server's hlculid_mask/hlculid_unmask and
// hlculid_mask_bigint/hlculid_unmask_bigint and the crate's hlculid_core::mask make them: the same
// key gives the same values (tests/data/mask_vectors.json). The specification is the doc comment
// of core/src/mask.rs: a balanced Feistel network of 8 rounds with SipHash-2-4 under the 16-byte
// key as its round function; 128 bits: the id's two 64-bit halves (big-endian), round i computes
// SipHash(0x80, i, half as 8 big-endian bytes); 63 bits (bigint ids 1 to 2^63 - 1): x - 1 goes
// through a Feistel on two 32-bit halves, round i computing the low 32 bits of SipHash(0x3F, i,
// half as 4 big-endian bytes), again until the value is at most 2^63 - 2 (cycle walking), + 1.
// With the same key, toV4Facade/fromV4Facade make and read UUIDv47's v4 facade of the id's UUIDv7
// form (a valid version 4 uuid): only its time is masked; its counter and publisher show.
const M64 = (1n << 64n) - 1n;
const M32 = (1n << 32n) - 1n;
const MASK_ROUNDS = 8;
const TAG_128 = 0x80;
const TAG_63 = 0x3f;
const TOP_63 = I64_MAX - 1n; // the largest value after x - 1
const KEY_HEX = /^[0-9A-Fa-f]$/;

function rotl(x, b) {
  return ((x << b) | (x >> (64n - b))) & M64;
}

// SipHash-2-4 (Aumasson and Bernstein, 2012) of message (bytes) under the key halves k0, k1.
function siphashKeyed(k0, k1, message) {
  let v0 = k0 ^ 0x736f6d6570736575n;
  let v1 = k1 ^ 0x646f72616e646f6dn;
  let v2 = k0 ^ 0x6c7967656e657261n;
  let v3 = k1 ^ 0x7465646279746573n;
  const sipround = () => {
    v0 = (v0 + v1) & M64; v1 = rotl(v1, 13n) ^ v0; v0 = rotl(v0, 32n);
    v2 = (v2 + v3) & M64; v3 = rotl(v3, 16n) ^ v2;
    v0 = (v0 + v3) & M64; v3 = rotl(v3, 21n) ^ v0;
    v2 = (v2 + v1) & M64; v1 = rotl(v1, 17n) ^ v2; v2 = rotl(v2, 32n);
  };
  const n = message.length;
  const end = n - (n % 8);
  const view = new DataView(message.buffer, message.byteOffset, n);
  // whole 8-byte words, little-endian; then the last 0 to 7 bytes with the length's low byte on top
  const words = [];
  for (let i = 0; i < end; i += 8) words.push(view.getBigUint64(i, true));
  let last = BigInt(n & 0xff) << 56n;
  for (let i = end; i < n; i++) last |= BigInt(message[i]) << BigInt(8 * (i - end));
  words.push(last);
  for (const m of words) {
    v3 ^= m;
    sipround();
    sipround();
    v0 ^= m;
  }
  v2 ^= 0xffn;
  for (let i = 0; i < 4; i++) sipround();
  return v0 ^ v1 ^ v2 ^ v3;
}

// SipHash-2-4 of message under a 16-byte key (both Uint8Array or Buffer), as the 64-bit BigInt the
// reference code returns (its 8 output bytes read little-endian): the paper's example,
// siphash24(bytes 00..0f, bytes 00..0e), is 0xa129ca6149be45e5n.
function siphash24(key, message) {
  if (!(key instanceof Uint8Array) || key.length !== 16) throw new RangeError('a SipHash key is 16 bytes');
  if (!(message instanceof Uint8Array)) throw new TypeError('a SipHash message is a Uint8Array');
  const k = new DataView(key.buffer, key.byteOffset, 16);
  return siphashKeyed(k.getBigUint64(0, true), k.getBigUint64(8, true), message);
}

// 16 bytes, or 32 hex digits in either case and nothing else. Errors say what is wrong with the
// key's shape, never what it holds.
function maskKeyBytes(key) {
  if (typeof key === 'string') {
    const chars = [...key]; // code points, as the crate counts characters
    if (chars.length !== 32) {
      throw new RangeError(`a mask key is 32 hex digits (16 bytes); the text given has ${chars.length} characters`);
    }
    const at = chars.findIndex((c) => !KEY_HEX.test(c));
    if (at >= 0) {
      throw new RangeError(`a mask key is 32 hex digits (16 bytes); character ${at + 1} of the text given is not one`);
    }
    return Buffer.from(key, 'hex');
  }
  if (key instanceof Uint8Array) {
    if (key.length !== 16) throw new RangeError(`a mask key is 16 bytes (or 32 hex digits); ${key.length} bytes given`);
    return Buffer.from(key);
  }
  throw new TypeError(`a mask key is 16 bytes (a Uint8Array) or 32 hex digits, not ${typeof key}`);
}

// A bigint id or masked bigint (decimal string or BigInt) -> BigInt, 1 to 2^63 - 1.
function positiveBigint(v) {
  const x = parseBigint(v);
  if (x < 1n) throw new RangeError(`the bigint masks map 1 to ${I64_MAX} onto themselves; ${x} is outside that range`);
  return x;
}

function uuidText(v) {
  const h = v.toString(16).padStart(32, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// A mask key. The key is held in private fields: console.log, util.inspect and JSON.stringify
// never show it.
class Mask {
  #k0;
  #k1;
  constructor(key) {
    const k = maskKeyBytes(key);
    this.#k0 = k.readBigUInt64LE(0);
    this.#k1 = k.readBigUInt64LE(8);
  }
  #f128(i, half) {
    const msg = new Uint8Array(10);
    msg[0] = TAG_128;
    msg[1] = i;
    new DataView(msg.buffer).setBigUint64(2, half, false);
    return siphashKeyed(this.#k0, this.#k1, msg);
  }
  #f63(i, half) {
    const msg = new Uint8Array(6);
    msg[0] = TAG_63;
    msg[1] = i;
    new DataView(msg.buffer).setUint32(2, Number(half), false);
    return siphashKeyed(this.#k0, this.#k1, msg) & M32;
  }
  // The masked value of an id's 128 bits as a BigInt (a permutation of 0 to 2^128 - 1), and back.
  maskValue(v) {
    let l = v >> 64n;
    let r = v & M64;
    for (let i = 0; i < MASK_ROUNDS; i++) [l, r] = [r, l ^ this.#f128(i, r)];
    return (l << 64n) | r;
  }
  unmaskValue(v) {
    let l = v >> 64n;
    let r = v & M64;
    for (let i = MASK_ROUNDS - 1; i >= 0; i--) [l, r] = [r ^ this.#f128(i, l), l];
    return (l << 64n) | r;
  }
  // An id (any text form the server reads) -> its masked form, a lower-case 8-4-4-4-12 uuid, as
  // hlculid_mask gives it. Its version and variant bits are whatever the permutation gives (it
  // is no valid uuid of any version).
  mask(id) {
    return uuidText(this.maskValue(BigInt(`0x${canonical(id).replace(/-/g, '')}`)));
  }
  // A masked uuid (8-4-4-4-12 or 32 hex digits, any case) -> the canonical id it stands for under
  // this key, as hlculid_unmask gives it. Every uuid unmasks to some id: a value masked with
  // another key gives an unrelated id, not an error.
  unmask(masked) {
    if (typeof masked !== 'string' || !(UUID_FORM.test(masked) || /^[0-9A-Fa-f]{32}$/.test(masked))) {
      throw new Error(`invalid masked id ${JSON.stringify(masked)}: a masked id is a uuid (8-4-4-4-12 hex)`);
    }
    const v = this.unmaskValue(BigInt(`0x${masked.replace(/-/g, '')}`));
    return format(Buffer.from(v.toString(16).padStart(32, '0'), 'hex'));
  }
  #permute64(v) {
    let l = v >> 32n;
    let r = v & M32;
    for (let i = 0; i < MASK_ROUNDS; i++) [l, r] = [r, l ^ this.#f63(i, r)];
    return (l << 32n) | r;
  }
  #unpermute64(v) {
    let l = v >> 32n;
    let r = v & M32;
    for (let i = MASK_ROUNDS - 1; i >= 0; i--) [l, r] = [r ^ this.#f63(i, l), l];
    return (l << 32n) | r;
  }
  // A positive bigint id (decimal string or BigInt) -> its masked form, a decimal string of 1 to
  // 2^63 - 1, as hlculid_mask_bigint gives it. A RangeError for 0.
  maskBigint(id) {
    let z = this.#permute64(positiveBigint(id) - 1n);
    while (z > TOP_63) z = this.#permute64(z);
    return (z + 1n).toString();
  }
  // UUIDv47's mask48: SipHash-2-4 of the 74 bits a v7 uuid and its facade share.
  #facadeMask48(u) {
    const b = Buffer.from(u.toString(16).padStart(32, '0'), 'hex');
    const m = Uint8Array.from([b[6] & 0x0f, b[7], b[8] & 0x3f, ...b.subarray(9)]);
    return siphashKeyed(this.#k0, this.#k1, m) & ((1n << 48n) - 1n);
  }
  #uuidv47Swap(u, version) {
    const v = u ^ (this.#facadeMask48(u) << 80n);
    return (v & ~(0xfn << 76n) & ~(3n << 62n)) | (BigInt(version) << 76n) | (2n << 62n);
  }
  // An id (any text form) -> UUIDv47's v4 facade of its UUIDv7 form, a lower-case 8-4-4-4-12
  // string: a valid RFC 9562 version 4 uuid whose time is masked; its other bits show the id's
  // counter and publisher (core/src/facade.rs).
  toV4Facade(id) {
    return uuidText(this.#uuidv47Swap(BigInt(`0x${toUuidv7(id).replace(/-/g, '')}`), 4));
  }
  // A v4 facade (8-4-4-4-12, any case) -> the canonical id it stands for under this key: time,
  // counter and publisher, the 6 lowest random bits 0. An Error for anything but a version 4 uuid
  // of the RFC 9562 variant.
  fromV4Facade(facade) {
    if (typeof facade !== 'string' || !UUID_FORM.test(facade)) throw new Error(`invalid uuid ${JSON.stringify(facade)}`);
    const v = BigInt(`0x${facade.replace(/-/g, '')}`);
    if (((v >> 76n) & 0xfn) !== 4n || ((v >> 62n) & 3n) !== 2n) {
      throw new Error(`uuid ${facade} is not a v4 facade (an RFC 9562 version 4 uuid)`);
    }
    return fromUuidv7(uuidText(this.#uuidv47Swap(v, 7)));
  }
  // A masked bigint (decimal string or BigInt) -> the bigint id's decimal string, as
  // hlculid_unmask_bigint gives it. A RangeError for 0.
  unmaskBigint(masked) {
    let z = this.#unpermute64(positiveBigint(masked) - 1n);
    while (z > TOP_63) z = this.#unpermute64(z);
    return (z + 1n).toString();
  }
}
module.exports.Mask = Mask;
module.exports.siphash24 = siphash24;

// A named consumer of an hlculid table (node-postgres): the server keeps its position; run()
// waits for rows (hlculid_consumer_wait sleeps until a commit makes some readable), takes the next
// batch (hlculid_consume) and calls the handler inside the same transaction, so what the handler
// writes with the client it is given happens exactly once with the move of the position. A
// handler that throws: the batch rolls back (its rows come again) and the same rows are handled
// one by one under savepoints; a row that still fails is scheduled for a retry with
// hlculid_consume_retry (past the consumer's max_attempts: a dead letter) and the consumer moves on.
class Consumer {
  #client = null;
  #rowType = '';
  #state = 'idle';
  #stopping = false;
  #cancelled = false;
  constructor(connection, table, name, options = {}) {
    const o = { batchSize: 1000, waitTimeout: 30, retryDelay: 10, idColumn: 'id', ...options };
    if (!Number.isInteger(o.batchSize) || o.batchSize < 1) throw new RangeError('batchSize must be an integer of at least 1');
    this.connection = connection;
    this.table = table;
    this.name = name;
    this.options = o;
    // seconds behind: 0 after a batch that took every readable row (or a wait that timed out),
    // else the age of the last row taken (the time in its id); null before the first batch
    this.lag = null;
    this.consumed = 0;
    this.retried = 0;
    this.deadLettered = 0;
  }

  // Ends run() after the batch in hand (which commits); a wait in progress is cancelled.
  stop() {
    this.#stopping = true;
    if (this.#state === 'waiting' && this.#client) {
      this.#cancelled = true;
      const pid = this.#client.processID;
      const c = this.#newClient();
      c.connect().then(() => c.query('SELECT pg_catalog.pg_cancel_backend($1)', [pid]))
        .catch(() => {}).finally(() => c.end().catch(() => {}));
    }
  }

  // Handles batches until stop(). signals: SIGTERM and SIGINT call stop() while it runs.
  async run(handler, { signals = false } = {}) {
    const onSignal = () => this.stop();
    if (signals) { process.on('SIGTERM', onSignal); process.on('SIGINT', onSignal); }
    try {
      await this.#open();
      let full = true;
      while (!this.#stopping) {
        if (!full && !(await this.#wait())) continue;
        if (this.#stopping) break;
        full = (await this.#batch(handler)) >= this.options.batchSize;
      }
    } finally {
      if (signals) { process.off('SIGTERM', onSignal); process.off('SIGINT', onSignal); }
      await this.close();
      this.#stopping = false; // run() may be called again
      this.#cancelled = false;
    }
  }

  // One batch, no wait: how many rows it took (0 when none was readable).
  async runOnce(handler) {
    await this.#open();
    return this.#batch(handler);
  }

  // true as soon as the consumer has rows to take, false at the timeout (seconds).
  async wait(timeout = this.options.waitTimeout) {
    await this.#open();
    const r = await this.#client.query("SELECT pg_catalog.hlculid_consumer_wait($1, $2 * interval '1 second') AS ok",
      [this.name, timeout]);
    return r.rows[0].ok;
  }

  async close() {
    const c = this.#client;
    this.#client = null;
    this.#state = 'idle';
    if (c) await c.end();
  }

  #newClient() {
    const Client = this.options.Client || require('pg').Client;
    return new Client(typeof this.connection === 'string' ? { connectionString: this.connection } : this.connection);
  }

  async #open() {
    if (this.#client) return;
    const c = this.#newClient();
    await c.connect();
    try {
      // regclass's text is the name quoted as needed, so it is safe to splice as a type
      this.#rowType = (await c.query('SELECT $1::regclass::text AS t', [this.table])).rows[0].t;
      const named = [['startAfter', 'start_after', 'hlculid'], ['startAt', 'start_at', 'timestamptz'],
        ['maxAttempts', 'max_attempts', 'int4']].filter(([k]) => this.options[k] != null);
      const params = [this.name, this.table, this.options.idColumn, ...named.map(([k]) => this.options[k])];
      const sql = 'SELECT pg_catalog.hlculid_consumer_create($1, $2::regclass, id_column => $3' +
        named.map(([, arg, type], i) => `, ${arg} => $${i + 4}::${type}`).join('') + ')';
      try {
        await c.query(sql, params);
      } catch (e) {
        if (e.code !== '42710') throw e; // it exists: its position and options stay
      }
    } catch (e) {
      await c.end();
      throw e;
    }
    this.#client = c;
  }

  async #wait() {
    if (this.#stopping) return false;
    this.#state = 'waiting';
    let got;
    try {
      got = await this.wait();
    } catch (e) {
      if (!(this.#cancelled && e.code === '57014')) throw e;
      got = false;
    } finally {
      this.#state = 'busy';
    }
    if (!got) this.lag = 0; // nothing was readable
    return got;
  }

  async #consume() {
    const r = await this.#client.query(`SELECT * FROM pg_catalog.hlculid_consume($1, NULL::${this.#rowType}, $2)`,
      [this.name, this.options.batchSize]);
    return r.rows;
  }

  async #batch(handler) {
    const c = this.#client;
    let rows;
    let failed = false;
    await c.query('BEGIN');
    try {
      rows = await this.#consume();
      if (rows.length) {
        try {
          await handler(rows, c);
        } catch (e) {
          failed = true;
          throw e;
        }
      }
      await c.query('COMMIT');
      this.consumed += rows.length;
    } catch (e) {
      await c.query('ROLLBACK');
      if (!failed) throw e;
      rows = await this.#oneByOne(handler);
    }
    this.#noteLag(rows);
    return rows.length;
  }

  async #oneByOne(handler) {
    const c = this.#client;
    let retried = 0;
    let dead = 0;
    await c.query('BEGIN');
    try {
      const rows = await this.#consume();
      for (const row of rows) {
        await c.query('SAVEPOINT hlculid_row');
        try {
          await handler([row], c);
          await c.query('RELEASE SAVEPOINT hlculid_row');
        } catch (e) {
          await c.query('ROLLBACK TO SAVEPOINT hlculid_row');
          const r = await c.query("SELECT pg_catalog.hlculid_consume_retry($1, $2::hlculid, $3 * interval '1 second', $4) AS s",
            [this.name, row[this.options.idColumn], this.options.retryDelay, `${e && e.name}: ${e && e.message}`]);
          if (r.rows[0].s) retried++; else dead++;
          if (this.options.onError) this.options.onError(row, e, r.rows[0].s);
        }
      }
      await c.query('COMMIT');
      this.consumed += rows.length - retried - dead;
      this.retried += retried;
      this.deadLettered += dead;
      return rows;
    } catch (e) {
      await c.query('ROLLBACK');
      throw e;
    }
  }

  #noteLag(rows) {
    if (rows.length < this.options.batchSize) {
      this.lag = 0;
    } else {
      const ms = parseInt(canonical(String(rows[rows.length - 1][this.options.idColumn])).slice(0, 12), 16);
      this.lag = Math.max(0, (Date.now() - ms) / 1000);
    }
  }
}
module.exports.Consumer = Consumer;
