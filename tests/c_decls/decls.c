/*
 * Compiled (never run) against each supported major's server headers by
 * scripts/check-c-decls.sh: the C declarations hlculid makes by hand in src/base/pg_c.rs must match
 * the server's. Each function pointer below has the type the Rust declaration spells; a
 * mismatch is a compile error under -Werror. The struct's layout is pinned to the numbers
 * that src/pg_tests.rs checks for the Rust mirror, so both sides agree.
 */
#include "postgres.h"

#include <stddef.h>

#include "catalog/partition.h"
#include "common/hashfn.h"
#include "utils/elog.h"
#include "utils/palloc.h"
#include "utils/sortsupport.h"

/* errcode(c_int) -> c_int */
int			(*const check_errcode) (int) = errcode;

/* memory_context_alloc_extended(MemoryContext, Size, c_int) -> *mut c_void */
void	   *(*const check_alloc) (MemoryContext, Size, int) = MemoryContextAllocExtended;

/* hash_bytes(*const u8, c_int) -> u32 */
uint32		(*const check_hash_bytes) (const unsigned char *, int) = hash_bytes;

/* hash_bytes_extended(*const u8, c_int, u64) -> u64 */
uint64		(*const check_hash_bytes_extended) (const unsigned char *, int, uint64) = hash_bytes_extended;

/* get_partition_ancestors(Oid) -> *mut List */
List	   *(*const check_partition_ancestors) (Oid) = get_partition_ancestors;

/* ssup_datum_unsigned_cmp(Datum, Datum, SortSupport) -> c_int */
int			(*const check_ssup_cmp) (Datum, Datum, SortSupport) = ssup_datum_unsigned_cmp;

#if PG_VERSION_NUM >= 180000
#include "utils/skipsupport.h"

/* SkipSupportIncDec(Relation, Datum, *mut bool) -> Datum */
SkipSupportIncDec check_incdec = (Datum (*) (Relation, Datum, bool *)) NULL;

/* SkipSupportData: [size, low_elem, high_elem, decrement, increment] = [32, 0, 8, 16, 24] */
StaticAssertDecl(sizeof(SkipSupportData) == 32, "SkipSupportData size");
StaticAssertDecl(offsetof(SkipSupportData, low_elem) == 0, "low_elem");
StaticAssertDecl(offsetof(SkipSupportData, high_elem) == 8, "high_elem");
StaticAssertDecl(offsetof(SkipSupportData, decrement) == 16, "decrement");
StaticAssertDecl(offsetof(SkipSupportData, increment) == 24, "increment");
#endif

/* libpq (src/base/pg_c.rs, mod libpq), taken by name with dlsym: the enums are C ints on the Rust side */
#include <dlfcn.h>
#include "libpq-fe.h"
void	   *(*const check_dlsym) (void *, const char *) = dlsym;
StaticAssertDecl(CONNECTION_OK == 0, "CONNECTION_OK");
StaticAssertDecl(PGRES_TUPLES_OK == 2, "PGRES_TUPLES_OK");
StaticAssertDecl(sizeof(ConnStatusType) == sizeof(int), "ConnStatusType");
StaticAssertDecl(sizeof(ExecStatusType) == sizeof(int), "ExecStatusType");
PGconn	   *(*const check_PQconnectdb) (const char *) = PQconnectdb;
ConnStatusType (*const check_PQstatus) (const PGconn *) = PQstatus;
char	   *(*const check_PQerrorMessage) (const PGconn *) = PQerrorMessage;
void		(*const check_PQfinish) (PGconn *) = PQfinish;
int			(*const check_PQsocket) (const PGconn *) = PQsocket;
int			(*const check_PQsendQuery) (PGconn *, const char *) = PQsendQuery;
int			(*const check_PQconsumeInput) (PGconn *) = PQconsumeInput;
int			(*const check_PQisBusy) (PGconn *) = PQisBusy;
PGresult   *(*const check_PQgetResult) (PGconn *) = PQgetResult;
ExecStatusType (*const check_PQresultStatus) (const PGresult *) = PQresultStatus;
char	   *(*const check_PQresultErrorMessage) (const PGresult *) = PQresultErrorMessage;
int			(*const check_PQntuples) (const PGresult *) = PQntuples;
int			(*const check_PQnfields) (const PGresult *) = PQnfields;
char	   *(*const check_PQgetvalue) (const PGresult *, int, int) = PQgetvalue;
int			(*const check_PQgetisnull) (const PGresult *, int, int) = PQgetisnull;
void		(*const check_PQclear) (PGresult *) = PQclear;
