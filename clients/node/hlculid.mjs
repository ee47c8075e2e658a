// The ES module entry point of the hlculid package: the CommonJS module's exports, by name.
import hl from './hlculid.js';

export const {
  format, canonical, minOf, maxOf, register, Generator, HlculidError, DEFAULT_MAX_SKEW_MS,
  parseBigint, bigintFromFields, bigintFields, bigintMinOf, bigintMaxOf, bigintToHlculid, hlculidToBigint,
  toUuidv7, fromUuidv7, Mask, siphash24, Consumer,
} = hl;
export default hl;
