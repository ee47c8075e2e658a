/*
 * Another extension's custom WAL resource manager, for tests/integration/test_wal_rmgr.py: what
 * PostgreSQL does when two preloaded libraries register one resource manager id (or one name).
 * Built by that test with -DOTHER_RMGR_ID=N -DOTHER_RMGR_NAME='"name"'; it only registers.
 */
#include "postgres.h"

#include "access/xlog_internal.h"
#include "fmgr.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static void
other_redo(XLogReaderState *record)
{
	elog(PANIC, "other_rmgr: no record of this resource manager is ever written");
}

static void
other_desc(StringInfo buf, XLogReaderState *record)
{
}

static const char *
other_identify(uint8 info)
{
	return NULL;
}

static const RmgrData other_rmgr = {
	.rm_name = OTHER_RMGR_NAME,
	.rm_redo = other_redo,
	.rm_desc = other_desc,
	.rm_identify = other_identify,
};

void
_PG_init(void)
{
	RegisterCustomRmgr(OTHER_RMGR_ID, &other_rmgr);
}
