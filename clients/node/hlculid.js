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

// Any of the server's hex text forms -> the canonical string (ULIDs: send them as text and let
// the server parse them).
function canonical(text) {
  const hex = text.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new Error(`invalid hlculid ${JSON.stringify(text)}`);
  return format(Buffer.from(hex, 'hex'));
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
    const remote = Buffer.from(id.replace(/-/g, ''), 'hex').readBigUInt64BE(0);
    if (remote > this.logical) this.logical = remote;
  }
}

module.exports = { format, canonical, minOf, maxOf, register, Generator };
