"""The driver adapters: psycopg 3 (register_psycopg, register_psycopg_bigint) and asyncpg
(register_asyncpg). The drivers are imported when a function is called, so the package needs
neither. The SQLAlchemy and Django column types are the modules hlculid.sqlalchemy and
hlculid.django."""

from __future__ import annotations

from typing import Any

from .bigint import BigId
from .ids import Hlculid, as_hlculid


# -- psycopg 3 -----------------------------------------------------------------------------------

def register_psycopg(conn: Any) -> Any:
    """Makes hlculid columns load as Hlculid (text and binary, including binary COPY) and
    Hlculid parameters dump as hlculid, on this connection."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "hlculid")
    if info is None:
        raise RuntimeError("the hlculid extension is not installed in this database")
    info.register(conn)  # also hlculid[]

    class TextLoader(Loader):
        def load(self, data):
            return Hlculid(bytes(data).decode())

    class BinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return Hlculid(bytes=bytes(data))

    class TextDumper(Dumper):
        oid = info.oid

        def dump(self, obj):
            return str(obj).encode()

    class BinaryDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj):
            return obj.bytes

    adapters = conn.adapters
    adapters.register_loader(info.oid, TextLoader)
    adapters.register_loader(info.oid, BinaryLoader)
    adapters.register_dumper(Hlculid, TextDumper)
    adapters.register_dumper(Hlculid, BinaryDumper)
    register_psycopg_bigint(conn)
    return info


def register_psycopg_bigint(context: Any) -> None:
    """Makes BigId parameters dump as bigint (text and binary, binary COPY included) on a
    connection or cursor (register_psycopg does it too). bigint columns still load as int (they
    are not all ids): BigId(value) reads one."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    int8 = context.adapters.types["int8"].oid

    class BigIdTextDumper(Dumper):
        oid = int8

        def dump(self, obj):
            return str(obj).encode()

    class BigIdBinaryDumper(Dumper):
        format = Format.BINARY
        oid = int8

        def dump(self, obj):
            return int(obj).to_bytes(8, "big", signed=True)

    context.adapters.register_dumper(BigId, BigIdTextDumper)
    context.adapters.register_dumper(BigId, BigIdBinaryDumper)

# -- asyncpg -------------------------------------------------------------------------------------

async def register_asyncpg(conn: Any, schema: str = "pg_catalog", binary: bool = True) -> None:
    """hlculid columns as Hlculid, and Hlculid (or uuid.UUID, or string) parameters, in binary
    (default) or text. `schema`: where the type is, pg_catalog since hlculid 0.5.0 (a server
    still on 0.4.0 or earlier has it where it was installed, usually public)."""
    if binary:
        await conn.set_type_codec(
            "hlculid", schema=schema, format="binary",
            encoder=lambda v: as_hlculid(v).bytes,
            decoder=lambda b: Hlculid(bytes=b))
    else:
        await conn.set_type_codec(
            "hlculid", schema=schema, format="text",
            encoder=lambda v: str(as_hlculid(v)),
            decoder=Hlculid)
