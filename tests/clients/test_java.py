"""The Java client (clients/java/Hlculid.java) and the JDBC recipes that use it
(tests/clients/java/HlculidJdbc.java): Debian's pgjdbc and the machine's JDK, no build tool.
pgjdbc speaks TCP only, so this test starts its own server listening on 127.0.0.1 (initdb -A
trust covers it); the others listen on their socket alone."""

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from pgcluster import RUN_ROOT, Cluster

HERE = Path(__file__).resolve().parent
CLIENT = HERE.parents[1] / "clients" / "java" / "Hlculid.java"
JAR = Path("/usr/share/java/postgresql.jar")  # libpostgresql-jdbc-java, scripts/setup-os.sh


@pytest.fixture(scope="module")
def tcp_server():
    c = Cluster("java", conf=["listen_addresses = '127.0.0.1'", "hlculid.publisher_id = 50"]).start()
    try:
        c.sql("CREATE EXTENSION hlculid")
        yield c
    finally:
        c.stop("immediate")
        shutil.rmtree(c.dir, ignore_errors=True)


def test_jdbc_recipe(tcp_server):
    # setup-os.sh installs both: a missing one is a broken machine, not a reason to skip
    javac, java = shutil.which("javac"), shutil.which("java")
    assert javac and java, "javac/java not found: run scripts/setup-os.sh (openjdk-17-jdk-headless)"
    assert JAR.is_file(), f"{JAR} not found: run scripts/setup-os.sh (libpostgresql-jdbc-java)"
    classes = RUN_ROOT / f"java-classes-{uuid.uuid4().hex[:6]}"
    classes.mkdir(parents=True)
    try:
        # C1 only and one GC thread: a short run on a 2-core machine starts faster
        jvm = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
        r = subprocess.run([javac, *(f"-J{o}" for o in jvm), "-Xlint:all", "-Werror", "-cp", str(JAR),
                            "-d", str(classes), str(CLIENT), str(HERE / "java" / "HlculidJdbc.java")],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"javac failed:\n{r.stdout}{r.stderr}"
        url = f"jdbc:postgresql://127.0.0.1:{tcp_server.port}/postgres?user=postgres"
        r = subprocess.run([java, *jvm, "-cp", f"{JAR}{os.pathsep}{classes}", "HlculidJdbc", url],
                           capture_output=True, text=True, timeout=120)
        print(r.stdout, r.stderr)
        assert r.returncode == 0, r.stderr
        assert "jdbc recipe: ok" in r.stdout
    finally:
        shutil.rmtree(classes, ignore_errors=True)
