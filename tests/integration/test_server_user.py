"""Who the servers run as: 'postgres' when the tests run as root, the invoking user otherwise, so
`make test` needs no root (tests/pgcluster.py; the step "non-root pgN" runs this file as a user
who is not root, scripts/nonroot-test.sh)."""

import os
import pwd
from pathlib import Path

from pgcluster import AS_ROOT, SERVER_USER


def uid_of(pid):
    """The real uid of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for pid {pid}")


def test_the_server_and_its_files_belong_to_the_servers_user(make_cluster):
    me = pwd.getpwuid(os.geteuid()).pw_name
    assert AS_ROOT == (os.geteuid() == 0)
    assert SERVER_USER == ("postgres" if AS_ROOT else me)
    c = make_cluster("server-user", preload=False).start()
    with c.connect() as conn:  # (open while looked at: a backend ends with its connection)
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        for pid in (c.postmaster_pid(), backend):
            assert pwd.getpwuid(uid_of(pid)).pw_name == SERVER_USER, f"pid {pid}"
    for path in (c.dir, c.data, c.data / "PG_VERSION"):
        assert pwd.getpwuid(os.lstat(path).st_uid).pw_name == SERVER_USER, path  # never through a link
    # the extension is usable by that server: its files were readable where it looked
    c.sql("CREATE EXTENSION hlculid")
    assert c.one("SELECT hlculid_ts('017FC21C5E7A-0000-000A-AAA111111111'::hlculid) IS NOT NULL")
