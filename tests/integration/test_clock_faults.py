"""Faults under the clock, injected for real: a data directory that fills up while ids are being
generated, and a system clock outside the range an id can hold. In each, no id is issued that
could sort before an earlier one, the error is the documented one, the server stays up, and
generation resumes by itself once the fault is gone."""

import os
import pwd
import subprocess
import threading
import time

import psycopg
import pytest

from pgcluster import AS_ROOT, RUN_ROOT, SERVER_USER, as_server

MARK = "hlculid.hwm"


def generate(c):
    return c.one("SELECT hlculid_generate()::text")


# Writes the file $1 until its file system is full (1 MiB, then page, then byte writes), then
# shows not even one byte more fits; run as the servers' user, in its directory.
FILL = (
    'dd if=/dev/zero of="$1" bs=1M 2>/dev/null; dd if=/dev/zero bs=4096 2>/dev/null >>"$1"; '
    'dd if=/dev/zero bs=1 2>/dev/null >>"$1"; '
    'if printf x 2>/dev/null >"$(dirname "$1")/probe"; then echo "$1: still room"; exit 1; fi'
)


def fill(path):
    """Fills the file system of `path`, as the servers' user."""
    as_server("sh", "-c", FILL, "sh", str(path))


def writer_pid(c):
    out = subprocess.run(["pgrep", "-P", str(c.postmaster_pid()), "-f", "hlculid high-water mark writer"],
                         capture_output=True, text=True).stdout.split()
    assert len(out) == 1, out
    return int(out[0])


@pytest.mark.full  # a full disk (tmpfs): make test-full
@pytest.mark.skipif(not AS_ROOT, reason="mounting the tmpfs of a full disk needs root")
def test_full_data_directory_stops_ids_with_58030_and_they_resume_by_themselves(make_cluster):
    c = make_cluster("diskfull", conf=["hlculid.publisher_id = 5"])
    # the data directory on its own small tmpfs, so that filling it touches nothing else; the
    # mount point is root's, beside the cluster (root mounts nothing where the servers' user could
    # put a link), and the servers' user copies the data directory onto it
    mount_point = RUN_ROOT / f"diskfull-tmpfs-{os.getpid()}"
    mount_point.mkdir(mode=0o700)
    pw = pwd.getpwnam(SERVER_USER)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size=160m,mode=0700,uid={pw.pw_uid},gid={pw.pw_gid}",
                    "tmpfs", str(mount_point)], check=True)
    initdb, c.data = c.data, mount_point
    try:
        as_server("cp", "-a", "--", f"{initdb}/.", str(c.data))
        c.start()
        c.sql("CREATE EXTENSION hlculid")
        issued = [generate(c) for _ in range(100)]
        writer = writer_pid(c)

        fill(c.data / "filler")
        # the mark in force runs out within 1.5 windows (1.5 s); then every id is refused
        deadline = time.time() + 10
        while True:
            assert time.time() < deadline, "ids were still issued 10 s after the disk filled"
            try:
                issued.append(generate(c))
            except psycopg.errors.IoError as e:
                diag = e.diag
                break
            time.sleep(0.01)
        assert diag.message_primary == f'could not write hlculid high-water mark file "{MARK}": No space left on device (os error 28)'
        assert "No id is issued until its high-water mark is on disk" in diag.message_detail
        assert "generation resumes by itself" in diag.message_hint
        refused_until = time.time() + 1.5
        while time.time() < refused_until:
            with pytest.raises(psycopg.errors.IoError):
                generate(c)
            time.sleep(0.05)
        # the server and its writer stay up; the writer says so once, not once per try
        assert c.one("SELECT 1") == 1
        assert writer_pid(c) == writer
        assert c.log().count("hlculid: could not write the high-water mark file") == 1
        assert "exited with exit code" not in c.log()

        as_server("rm", "-f", "--", str(c.data / "filler"), str(c.data / "probe"))
        deadline = time.time() + 10
        while True:
            assert time.time() < deadline, "generation did not resume 10 s after space was freed"
            try:
                first = generate(c)
                break
            except psycopg.errors.IoError:
                time.sleep(0.05)
        assert first > max(issued)
        assert issued == sorted(issued) and len(set(issued)) == len(issued)
        time.sleep(0.5)
        assert "hlculid: the high-water mark file can be written again" in c.log()
        # and the mark written after the outage holds across a restart
        c.stop()
        c.start()
        assert generate(c) > first
    finally:
        c.stop("immediate")
        c.data = initdb
        # a process left with its directory on the tmpfs makes umount busy: then lazily
        if subprocess.run(["umount", str(mount_point)]).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], check=True)
        mount_point.rmdir()


# libfaketime offsets, in seconds from the real time: 290e9 s is past 10889-08-02 (2^48 ms after
# 1970), the last millisecond an id can hold; -1.8e9 s is back in 1969; the absolute time freezes
# the clock at the Unix epoch, which is what an unset clock reads.
OUTSIDE = {"after 10889": ("+290000000000", "s after the Unix epoch"),
           "before 1970": ("-1800000000", "s before the Unix epoch"),
           "at the epoch": ("1970-01-01 00:00:00", "the Unix epoch itself")}


# make test: the epoch (an unset clock); make test-full: the other two as well
@pytest.mark.parametrize("case", [c if c == "at the epoch" else pytest.param(c, marks=pytest.mark.full)
                                  for c in OUTSIDE])
def test_a_system_clock_outside_the_id_range_issues_nothing_and_moves_nothing(make_cluster, case):
    spec, reads = OUTSIDE[case]
    c = make_cluster("timeedge", faketime=True, conf=["hlculid.publisher_id = 6"]).start()
    c.sql("CREATE EXTENSION hlculid")
    issued = [generate(c) for _ in range(100)]
    mark = c.one("SELECT high_water_mark FROM hlculid_clock()")

    c.set_clock(spec)
    # an id at or below the clock changes nothing: observing it needs no wall clock
    c.sql("SELECT hlculid_observe(%s::hlculid)", (issued[-1],))
    ahead = f"{int(issued[-1][:12], 16) + 1:012X}-0000-0000-000000000000"
    for query, params in [("SELECT hlculid_generate()", None),
                          ("SELECT hlculid_observe(%s::hlculid)", (ahead,))]:
        with pytest.raises(psycopg.errors.DatetimeFieldOverflow) as e:
            c.sql(query, params)
        diag = e.value.diag
        assert diag.message_primary == "the system clock is outside hlculid's time range, so no ids are issued"
        assert reads in diag.message_detail
        assert "10889-08-02" in diag.message_detail
        assert "Correct the system clock" in diag.message_hint
    # the step has taken effect (the calls above were refused): from now on the writer, ten
    # rounds a second, must not move the mark (to the reading or anywhere). The mark read before
    # the step may be behind by an extension the writer was still making for the ids above (on a
    # loaded machine CI saw one land a second later): that one is not below it, and a write the
    # writer began before the step has half a second to end.
    time.sleep(0.5)
    first = c.one("SELECT high_water_mark FROM hlculid_clock()")
    time.sleep(1)
    wall, drift, mark_now = c.sql("SELECT wall_time, drift_ms, high_water_mark FROM hlculid_clock()")[0]
    assert (wall, drift) == (None, None)
    assert mark_now == first and first >= mark
    assert c.one("SELECT 1") == 1

    c.set_clock("+0")
    after = generate(c)
    assert after > max(issued)
    # the clock was left where it was: the new id carries today's time, not the bad reading's
    assert c.one("SELECT abs(extract(epoch FROM hlculid_ts(%s::hlculid) - now())) < 60", (after,))
    assert "went backwards" not in c.log()


def test_a_session_waiting_behind_a_stalled_mark_write_can_be_cancelled(make_cluster):
    """The mark writer stalls inside its write (the temporary file is a FIFO nobody reads, so
    opening it blocks, as a hung disk would block an fsync). A session that then needs a new
    mark waits for the writer; a cancel (statement_timeout) ends that wait at once, and once the
    write completes, generation resumes above every id returned before."""
    c = make_cluster("stalledmark").start()
    c.sql("CREATE EXTENSION hlculid")
    before = generate(c)
    fifo = c.data / (MARK + ".tmp")
    as_server("mkfifo", "-m", "600", "--", str(fifo))
    # the writer refreshes the mark when less than half a window (500 ms) is left: within about a
    # second it is blocked opening the FIFO, holding the right to write the mark
    time.sleep(1.5)
    released = threading.Event()

    def release():
        """Lets the stalled write finish (a reader opens the FIFO; the write then fails at fsync
        and is retried on a regular file)."""
        # as the servers' user, in its directory; opened read-write, which never blocks
        as_server("sh", "-c", 'exec 3<>"$1"; rm -f -- "$1"; sleep 0.5', "sh", str(fifo))
        released.set()

    # a watchdog, so that a wait that cannot be cancelled fails the test instead of hanging it
    watchdog = threading.Timer(30, release)
    watchdog.start()
    try:
        with c.connect() as conn:
            conn.execute("SET statement_timeout = '1s'")
            t0 = time.monotonic()
            with pytest.raises(psycopg.errors.QueryCanceled):
                while time.monotonic() - t0 < 20:  # the reservation runs out within 1.5 s
                    conn.execute("SELECT hlculid_generate_n(1000)")
            waited = time.monotonic() - t0
        assert not released.is_set(), "the wait ended only when the stalled write was released"
        assert waited < 10, waited
        # the write is still stalled, and the server answers
        assert as_server("test", "-p", str(fifo), check=False).returncode == 0 and c.one("SELECT 1") == 1
    finally:
        watchdog.cancel()
        if not released.is_set():
            release()
    deadline = time.time() + 15
    while True:
        try:
            after = generate(c)
            break
        except psycopg.errors.IoError:  # the failed fsync of the FIFO, until a regular file is written
            assert time.time() < deadline, "generation did not resume"
            time.sleep(0.1)
    assert after > before
