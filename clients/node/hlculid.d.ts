// Types of the hlculid package (hlculid.js, hlculid.mjs). Ids are canonical strings
// ("017FC21C5E7A-0000-000A-AAA111111111"); bigint ids are decimal strings (or BigInt in).

/** An id in any text form the server reads: 12-4-4-12 hex, 32 hex digits, 8-4-4-4-12, or a ULID. */
export type IdText = string;
/** A bigint id: its decimal string, or a BigInt. Never a Number (it cannot hold ids above 2^53). */
export type BigintId = string | bigint;

/** 16 bytes -> the canonical string. */
export function format(buf: Uint8Array): string;
/** Any accepted text form -> the canonical string; throws on anything else (a random uuid's 8-4-4-4-12 spelling included). */
export function canonical(text: IdText): string;
/** The smallest id of the millisecond of a Date. */
export function minOf(date: Date): string;
/** The largest id of the millisecond of a Date. */
export function maxOf(date: Date): string;

/** node-postgres's `types` (pg.types), as register() uses it. */
export interface PgTypes {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => any;
  setTypeParser(oid: number, format: 'text' | 'binary', parser: (value: string) => any): void;
}
/** A node-postgres client or pool. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}
/** Makes hlculid columns (and hlculid[] arrays) parse to canonical strings; returns the type's OID. */
export function register(client: PgQueryable, types: PgTypes): Promise<number>;

/** The crate's hlculid_core::Error variants a Generator reports. */
export type HlculidErrorCode =
  | 'WallClockOutOfRange'
  | 'Exhausted'
  | 'TooFarAhead'
  | 'RandomUuid'
  | 'PublisherTooWideForBigint'
  | 'BigintTimeOutOfRange';

/** Why a Generator made no id or refused an observed one; nothing changed. */
export class HlculidError extends RangeError {
  constructor(code: HlculidErrorCode, message: string, fields?: { aheadMs?: number; publisher?: number });
  readonly code: HlculidErrorCode;
  /** With 'TooFarAhead': how far ahead of the wall clock the observed id is, in ms. */
  readonly aheadMs?: number;
  /** With 'PublisherTooWideForBigint': the generator's publisher. */
  readonly publisher?: number;
}

/** The server's default hlculid.max_clock_skew, in ms (500). */
export const DEFAULT_MAX_SKEW_MS: number;

export interface GeneratorOptions {
  /** How far ahead of the wall clock an observed id may be, and the run-ahead bound, in ms (default 500). */
  maxSkewMs?: number;
  /** The wall clock in Unix ms (default Date.now): for tests and simulations. */
  now?: () => number;
  /** A synchronous wait of the ms given, at the run-ahead bound (default: Atomics.wait). */
  sleep?: (ms: number) => void;
  /** 48 random bits as a Number, one call per 128-bit id (default: crypto.randomFillSync in blocks). */
  random?: () => number;
}

/** Ids made in this process with the server's clock (in memory only). */
export class Generator {
  /** publisher: 0 to 65535 (0 to 1023 for bigint ids). */
  constructor(publisher: number, options?: GeneratorOptions);
  readonly publisher: number;
  readonly maxSkewMs: number;
  /** Calls that waited at the run-ahead bound. */
  readonly waits: number;
  /** Steps back of the wall clock of more than 10 ms seen. */
  readonly backwardSteps: number;
  /** The next id, canonical: greater than every id this generator returned before. */
  generate(): string;
  /** The next bigint id, a decimal string, from the same clock. */
  generateBigint(): string;
  /** The horizon an application publisher reports with hlculid_advance_horizon. */
  horizon(): string;
  /** The receive rule: later ids sort after id. Throws HlculidError ('RandomUuid', 'TooFarAhead', 'WallClockOutOfRange'). */
  observe(id: IdText): void;
}

/** A bigint id -> BigInt, checked (0 to 2^63 - 1). */
export function parseBigint(id: BigintId): bigint;
/** Fields -> the bigint id's decimal string (ms 0 to 2^42 - 1, counter 0 to 2047, publisher 0 to 1023). */
export function bigintFromFields(ms: number | bigint, counter: number | bigint, publisher: number | bigint): string;
/** A bigint id's fields, as hlculid_bigint_decode gives them. */
export function bigintFields(id: BigintId): { ms: number; counter: number; publisher: number; date: Date };
export function bigintMinOf(date: Date): string;
export function bigintMaxOf(date: Date): string;
/** A bigint id -> the 128-bit id with its time, counter and publisher (random bits 0). */
export function bigintToHlculid(id: BigintId): string;
/** A 128-bit id -> the bigint id with its time, counter and publisher; a RangeError when one does not fit. */
export function hlculidToBigint(id: IdText): string;
/** An id -> its RFC 9562 version 7 uuid form (lower-case 8-4-4-4-12). */
export function toUuidv7(id: IdText): string;
/** A version 7 uuid -> the canonical id it stands for. */
export function fromUuidv7(uuid: string): string;

/**
 * A keyed, reversible mask of ids shown outside, as the server's hlculid_mask / hlculid_unmask and
 * hlculid_mask_bigint / hlculid_unmask_bigint make it (the same key gives the same values): an
 * 8-round Feistel network with SipHash-2-4 as its round function. The key is never shown.
 */
export class Mask {
  /** key: 32 hex digits (either case), or 16 bytes. */
  constructor(key: string | Uint8Array);
  /** An id (any text form) -> its masked form, a lower-case 8-4-4-4-12 uuid (no valid uuid of any version). */
  mask(id: IdText): string;
  /** A masked uuid (8-4-4-4-12 or 32 hex digits) -> the canonical id it stands for under this key. */
  unmask(masked: string): string;
  /** A positive bigint id -> its masked form, a decimal string of 1 to 2^63 - 1; a RangeError for 0. */
  maskBigint(id: BigintId): string;
  /** A masked bigint -> the bigint id's decimal string; a RangeError for 0. */
  unmaskBigint(masked: BigintId): string;
  /** An id -> UUIDv47's v4 facade of its UUIDv7 form (a valid version 4 uuid; only the time is masked). */
  toV4Facade(id: IdText): string;
  /** A v4 facade -> the canonical id it stands for (the 6 lowest random bits 0); throws for anything but a v4 uuid. */
  fromV4Facade(facade: string): string;
  /** The 128-bit permutation on an id's value (0 to 2^128 - 1). */
  maskValue(value: bigint): bigint;
  /** The inverse of maskValue. */
  unmaskValue(value: bigint): bigint;
}
/** SipHash-2-4 of message under a 16-byte key, as the reference code's 64-bit result. */
export function siphash24(key: Uint8Array, message: Uint8Array): bigint;

/** A client of the transaction a Consumer's handler runs in (a connected pg.Client). */
export interface ConsumerClient {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

export interface ConsumerOptions {
  /** Rows a batch takes at most (default 1000). */
  batchSize?: number;
  /** Seconds one hlculid_consumer_wait sleeps at most before the loop checks in (default 30). */
  waitTimeout?: number;
  /** Seconds before a failed row comes again (default 10). */
  retryDelay?: number;
  /** For a consumer this creates: attempts before a row becomes a dead letter (the server's default, 5). */
  maxAttempts?: number;
  /** For a consumer this creates: start after this id. */
  startAfter?: IdText;
  /** For a consumer this creates: start at this time (new Date() = from now). */
  startAt?: Date | string;
  /** For a consumer this creates: the table's id column (default 'id'). */
  idColumn?: string;
  /** Called for each row that failed alone: scheduled is false when it became a dead letter. */
  onError?: (row: any, error: unknown, scheduled: boolean) => void;
  /** The pg Client class (default require('pg').Client). */
  Client?: new (config: any) => any;
}

/** A named consumer of an hlculid table: the server keeps its position. */
export class Consumer {
  /** connection: a connection string or a pg.Client config; table: its name, schema-qualified if needed. */
  constructor(connection: string | object, table: string, name: string, options?: ConsumerOptions);
  readonly name: string;
  readonly table: string;
  /** Seconds behind: 0 after a batch that took every readable row, else the age of the last row taken (null before the first batch). */
  readonly lag: number | null;
  /** Rows handled, scheduled for a retry, and made dead letters by this object. */
  readonly consumed: number;
  readonly retried: number;
  readonly deadLettered: number;
  /** Waits and handles batches until stop(); the handler runs inside each batch's transaction. */
  run(handler: (rows: any[], client: ConsumerClient) => unknown | Promise<unknown>, options?: { signals?: boolean }): Promise<void>;
  /** One batch without waiting: how many rows it took. */
  runOnce(handler: (rows: any[], client: ConsumerClient) => unknown | Promise<unknown>): Promise<number>;
  /** true as soon as the consumer has rows to take, false after timeout seconds. */
  wait(timeout?: number): Promise<boolean>;
  /** Ends run() after the batch in hand; a wait in progress is cancelled. */
  stop(): void;
  close(): Promise<void>;
}
