// Types of hlculid/drizzle (hlculid-drizzle.js, hlculid-drizzle.mjs); hlculid-drizzle.d.mts is the same text for ES modules (checked by tests/clients/test_packages.py).
import type { ConvertCustomConfig, PgCustomColumnBuilder } from 'drizzle-orm/pg-core';
import type { SQL, SQLWrapper } from 'drizzle-orm';

export interface HlculidColumnConfig {
  /** 'string' (default): an hlculid column of canonical strings; 'bigint': a bigint column of bigint ids (decimal strings). */
  mode?: 'string' | 'bigint';
}

export type HlculidColumnBuilder<TName extends string> = PgCustomColumnBuilder<
  ConvertCustomConfig<TName, { data: string; driverData: string }>
>;

/** An hlculid column (or, with { mode: 'bigint' }, a bigint id column) whose values are strings. */
export function hlculid(): HlculidColumnBuilder<''>;
export function hlculid(config: HlculidColumnConfig): HlculidColumnBuilder<''>;
export function hlculid<TName extends string>(name: TName, config?: HlculidColumnConfig): HlculidColumnBuilder<TName>;

/** `column <@ tstzrange(from, to, bounds)`: the time window the planner estimates and turns into index conditions (bounds default '[)'). */
export function inRange(
  column: SQLWrapper,
  from: Date | string,
  to: Date | string,
  bounds?: '[)' | '[]' | '(]' | '()',
): SQL;
