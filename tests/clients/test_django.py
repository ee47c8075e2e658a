"""The Django recipe (clients/python/src/hlculid/django.py, module hlculid.django) with psycopg 3 against a real server: the
app in tests/clients/django_app, its migration made by makemigrations into a temporary directory
and applied by migrate; 10,000 rows with server ids (db_default) and 10,000 with client ids; a
time window with bound ids (an index range scan, checked with QuerySet.explain), ordering,
lookups by id; and the admin's changelist and change form, as a logged-in superuser."""

import sys
import uuid
from datetime import timedelta

import psycopg
import pytest
from conftest import N
from hlculid import Generator, Hlculid

DB = "django_recipe"


@pytest.fixture(scope="module")
def django_env(server, tmp_path_factory):
    with psycopg.connect(f"host={server.dir} port={server.port} user=postgres dbname=postgres",
                         autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB}")
        conn.execute(f"CREATE DATABASE {DB}")
    with psycopg.connect(f"host={server.dir} port={server.port} user=postgres dbname={DB}",
                         autocommit=True) as conn:
        conn.execute("CREATE EXTENSION hlculid")
    migrations = tmp_path_factory.mktemp("django_migrations")
    (migrations / "hlculid_test_migrations").mkdir()
    (migrations / "hlculid_test_migrations" / "__init__.py").write_text("")
    sys.path.insert(0, str(migrations))
    from django_app.settings import configure

    configure(str(server.dir), str(server.port), DB, "hlculid_test_migrations")
    from django.core.management import call_command

    call_command("makemigrations", "django_app", verbosity=0)
    call_command("migrate", verbosity=0)
    yield migrations / "hlculid_test_migrations"
    from django.db import connections

    connections.close_all()


def test_makemigrations_writes_the_field_and_migrate_makes_the_column(django_env):
    from django.core.management import call_command
    from django.db import connection

    (initial,) = django_env.glob("0001_*.py")
    text = initial.read_text()
    assert "import hlculid.django" in text
    assert ("('id', hlculid.django.HlculidField(db_default=hlculid.django.HlculidGenerate(), "
            "primary_key=True, serialize=False))") in text, text
    # the field deconstructs to itself: nothing left to migrate
    call_command("makemigrations", "django_app", check=True, dry_run=True, verbosity=0)
    with connection.cursor() as cur:
        cur.execute("SELECT format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid) "
                    "FROM pg_attribute a JOIN pg_attrdef d ON (d.adrelid, d.adnum) = (a.attrelid, a.attnum) "
                    "WHERE a.attrelid = 'django_app_event'::regclass AND a.attname = 'id'")
        assert cur.fetchone() == ("hlculid", "hlculid_generate()")
        cur.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'django_app_event'")
        assert [r[0] for r in cur.fetchall()] == [
            "CREATE UNIQUE INDEX django_app_event_pkey ON public.django_app_event USING btree (id)"]


def test_server_and_client_ids_round_trip_and_a_window_is_an_index_range_scan(django_env):
    from django.core.exceptions import ValidationError
    from django.db import connection
    from django.db.models import F, Func, IntegerField, TextField
    from django.db.models.functions import Cast
    from django_app.models import Event

    Event.objects.all().delete()
    # 1. server ids: save() reads the db_default id back through RETURNING; bulk_create sets a
    # returned key only on objects whose key is unset, so its rows' ids are read back after
    few = [Event(n=i) for i in range(100)]
    for e in few:
        e.save()
    assert all(type(e.id) is Hlculid for e in few)
    assert [e.id for e in few] == sorted(e.id for e in few)  # in the order of the inserts
    Event.objects.bulk_create([Event(n=i) for i in range(100, N)], batch_size=2000)
    server_rows = dict(Event.objects.values_list("n", "id"))
    assert all(server_rows[i] == e.id for i, e in enumerate(few))
    server_ids = [server_rows[i] for i in range(N)]
    assert all(type(i) is Hlculid and i.publisher == 50 for i in server_ids) and len(set(server_ids)) == N
    assert server_ids == sorted(server_ids)
    # 2. client ids, made after the server's, bound as parameters
    gen = Generator(51)
    mine = [gen.generate() for _ in range(N)]
    Event.objects.bulk_create([Event(id=i, n=N + k) for k, i in enumerate(mine)], batch_size=2000)
    rows = list(Event.objects.annotate(
        text=Cast("id", TextField()),
        publisher=Func(F("id"), function="hlculid_publisher", output_field=IntegerField()),
    ).order_by("id").values_list("id", "n", "text", "publisher"))
    assert [r[0] for r in rows] == server_ids + mine
    assert [r[1] for r in rows] == list(range(2 * N))
    assert all(type(r[0]) is Hlculid and str(r[0]) == r[2] and r[0].publisher == r[3] for r in rows)
    assert list(Event.objects.filter(n__gte=N).order_by("id").values_list("id", flat=True)) == mine

    # 3. a time window with bound ids: the client's rows of a stretch of milliseconds, exactly
    lo, hi = Hlculid.min_of(mine[N // 4].ts), Hlculid.max_of(mine[N // 2].ts + timedelta(milliseconds=1))
    expected = sorted(i for i in server_ids + mine if lo <= i <= hi)
    assert N // 4 < len(expected) < 2 * N
    window = Event.objects.filter(id__range=(lo, hi)).order_by("id")
    assert [e.id for e in window] == expected
    assert list(Event.objects.filter(id__gte=lo, id__lte=hi).order_by("id").values_list("id", flat=True)) == expected
    # the recipe: the lookup in_range, `id <@ tstzrange(...)`, estimated by the planner
    in_range = Event.objects.filter(id__in_range=(lo.ts, hi.ts + timedelta(milliseconds=1))).order_by("id")
    assert [e.id for e in in_range] == expected
    closed = Event.objects.filter(id__in_range=(lo.ts, hi.ts - timedelta(milliseconds=1), "[]")).order_by("id").values_list("id", flat=True)
    assert list(closed) == [i for i in expected if i.ms < hi.ms]
    with pytest.raises(ValueError, match="in_range takes"):
        list(Event.objects.filter(id__in_range=(lo.ts, hi.ts, "[[")))
    with connection.cursor() as cur:
        cur.execute("ANALYZE django_app_event")
        cur.execute("SET enable_seqscan = off")  # an index scan if one can be used
    try:
        plan = window.explain()
        in_range_plan = in_range.explain()
    finally:
        with connection.cursor() as cur:
            cur.execute("RESET enable_seqscan")
    assert "Seq Scan" not in plan and "Index Cond: ((id >= '" in plan and "::hlculid" in plan, plan
    assert "::text" not in plan and "::uuid" not in plan and "::character varying" not in plan, plan
    assert "Seq Scan" not in in_range_plan and "Index Cond" in in_range_plan, in_range_plan

    # 4. lookups by id: an Hlculid, any text form of it, or a uuid.UUID of its bytes
    target = mine[N // 3]
    for key in (target, str(target), str(target).lower(), target.ulid(), uuid.UUID(int=target.int)):
        found = Event.objects.get(pk=key)
        assert type(found.id) is Hlculid and found.id == target and found.n == N + N // 3
    assert list(Event.objects.filter(id__in=[str(mine[0]), mine[1].ulid()]).order_by("id")
                .values_list("n", flat=True)) == [N, N + 1]
    # a string that is no id is refused in the client, before any SQL is sent
    with pytest.raises(ValidationError):
        Event.objects.get(pk="not an id")
    # and so is a random uuid (version 4), as the server's uuid cast refuses one
    with pytest.raises(ValidationError):
        Event.objects.get(pk=uuid.uuid4())


def test_admin_shows_and_reads_the_canonical_text(django_env):
    from django.contrib.admin.utils import display_for_field
    from django.contrib.auth.models import User
    from django.test import Client
    from django_app.models import Event
    from hlculid.django import HlculidFormField

    e = Event(n=-7)
    e.save()
    field = Event._meta.get_field("id")
    assert display_for_field(e.id, field, "-") == str(e.id)
    form_field = field.formfield()
    assert isinstance(form_field, HlculidFormField)
    assert form_field.prepare_value(e.id) == str(e.id) and form_field.clean(e.id.ulid()) == e.id

    User.objects.filter(username="admin").delete()
    User.objects.create_superuser("admin", "admin@example.com", "pw")
    client = Client()
    assert client.login(username="admin", password="pw")
    page = client.get("/admin/django_app/event/?n=-7")
    assert page.status_code == 200
    assert f">{e.id}</a>" in page.content.decode()
    change_url = f"/admin/django_app/event/{e.id}/change/"
    assert change_url in page.content.decode()
    page = client.get(change_url)
    assert page.status_code == 200
    assert f'value="{e.id}"' in page.content.decode()
    # the form reads any text form of the id, and saves the same row
    reply = client.post(change_url, {"id": e.id.ulid().lower(), "n": -8})
    assert reply.status_code == 302, reply.content.decode()[:2000]
    assert Event.objects.get(pk=e.id).n == -8 and Event.objects.filter(n__in=[-7, -8]).count() == 1
    reply = client.post(change_url, {"id": "not an id", "n": -9})
    assert reply.status_code == 200 and "Enter a valid hlculid." in reply.content.decode()
    # an unknown or malformed id in the URL is "not found", not a server error
    for bad in (Generator(53).generate(), "not-an-id"):
        reply = client.get(f"/admin/django_app/event/{bad}/change/")
        assert reply.status_code == 302
