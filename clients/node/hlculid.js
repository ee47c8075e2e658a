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
    return format(Buffer.from(text.replace(/-/g, ''), 'hex'));
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

// The server's rule, L = max(L + 1, now_ms << 16), in this process (in memory only).
class Generator {
  constructor(publisher) {
    if (!(publisher >= 0 && publisher <= 0xffff)) throw new Error('publisher must be 0..65535');
    this.publisher = publisher;
    this.logical = 0n;
  }
  generate() {
    const wall = BigInt(Date.now()) << 16n;
    this.logical = this.logical + 1n > wall ? this.logical + 1n : wall;
    const buf = Buffer.alloc(16);
    buf.writeBigUInt64BE(this.logical, 0);
    buf.writeUInt16BE(this.publisher, 8);
    crypto.randomFillSync(buf, 10, 6);
    return format(buf);
  }
  observe(id) {
    const remote = Buffer.from(canonical(id).replace(/-/g, ''), 'hex').readBigUInt64BE(0);
    if (remote > this.logical) this.logical = remote;
  }
}

module.exports = { format, canonical, minOf, maxOf, register, Generator };
