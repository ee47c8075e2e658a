//! The sqlx recipe (feature `sqlx`) against a real server with the extension: scripts/clients.sh
//! starts one and runs these with `--ignored` and HLCULID_TEST_DSN set. A `FromRow` model whose
//! key is `hlculid DEFAULT hlculid_generate()`: 10,000 ids made by the server and 10,000 by the
//! crate's `Generator`, bound as `hlculid[]`, read back in binary (and text) equal to the
//! server's text form; a time window with bound ids; ordering; lookups by id and by string;
//! `uuid` columns; bigint ids in a `bigint` key.

use hlculid_core::{BigId, Generator, Id};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgHasArrayType};
use sqlx::{Connection, Row, Type, TypeInfo};
use std::time::Duration;

const N: usize = 10_000;

/// HLCULID_TEST_DSN is libpq's `key=value` form, which sqlx does not read: its keys, as options.
async fn connect() -> PgConnection {
    let dsn = std::env::var("HLCULID_TEST_DSN")
        .expect("HLCULID_TEST_DSN: these tests need a server with hlculid (scripts/clients.sh)");
    let mut options = PgConnectOptions::new_without_pgpass();
    for pair in dsn.split_whitespace() {
        let (key, value) = pair.split_once('=').expect("key=value");
        options = match key {
            "host" if value.starts_with('/') => options.socket(value),
            "host" => options.host(value),
            "port" => options.port(value.parse().unwrap()),
            "user" => options.username(value),
            "dbname" => options.database(value),
            _ => panic!("unexpected key {key} in HLCULID_TEST_DSN"),
        };
    }
    let mut conn = PgConnection::connect_with(&options).await.unwrap();
    sqlx::query("CREATE EXTENSION IF NOT EXISTS hlculid")
        .execute(&mut conn)
        .await
        .unwrap();
    conn
}

/// The model: the key is the library's `Id`.
#[derive(sqlx::FromRow, Debug, PartialEq)]
struct Event {
    id: Id,
    n: i32,
    source: String,
}

/// Ids made by the crate in four bursts 5 ms apart, so a window can cut between them.
fn client_ids(publisher: u16) -> Vec<Id> {
    let ids = Generator::new(publisher);
    let mut mine = Vec::with_capacity(N);
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(5));
        mine.extend((0..N / 4).map(|_| ids.generate().unwrap()));
    }
    mine
}

#[test]
fn the_type_is_hlculid_and_its_array_hlculid_array() {
    use sqlx::Postgres;
    assert_eq!(<Id as Type<Postgres>>::type_info().name(), "hlculid");
    assert_eq!(
        <Id as PgHasArrayType>::array_type_info().name(),
        "hlculid[]"
    );
    assert_eq!(<BigId as Type<Postgres>>::type_info().name(), "INT8");
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn a_model_with_an_hlculid_key() {
    let mut conn = connect().await;
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS sqlx_events;
         CREATE TABLE sqlx_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(),
                                   n int4 NOT NULL, source text NOT NULL)",
    )
    .execute(&mut conn)
    .await
    .unwrap();

    // 1. the server default makes the ids; RETURNING reads them as Id, each equal to the
    //    server's own text form, increasing in insertion order
    let ns: Vec<i32> = (0..N as i32).collect();
    let made: Vec<(Id, i32, String)> = sqlx::query_as(
        "INSERT INTO sqlx_events (n, source) SELECT n, 'server' FROM unnest($1::int4[]) n
         RETURNING id, n, id::text",
    )
    .bind(&ns)
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(made.len(), N);
    let mut server: Vec<(i32, Id)> = Vec::with_capacity(N);
    for (id, n, text) in &made {
        assert_eq!(&id.to_string(), text);
        assert_eq!(id.publisher(), 50); // hlculid.publisher_id in scripts/clients.sh
        server.push((*n, *id));
    }
    server.sort();
    let server: Vec<Id> = server.into_iter().map(|(_, id)| id).collect();
    assert!(server.windows(2).all(|w| w[0] < w[1]));

    // 2. ids made by the crate, bound as one hlculid[] (and int4[], text[]) parameter
    let mine = client_ids(61);
    let n: Vec<i32> = (0..N as i32).collect();
    let inserted = sqlx::query(
        "INSERT INTO sqlx_events (id, n, source)
         SELECT id, n, 'client' FROM unnest($1::hlculid[], $2::int4[]) AS u(id, n)",
    )
    .bind(&mine)
    .bind(&n)
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(inserted.rows_affected(), N as u64);

    // read back into the model, in key order: the client's order, byte for byte as the server
    // prints them
    let rows: Vec<(Id, String)> = sqlx::query_as(
        "SELECT id, id::text AS text FROM sqlx_events WHERE source = $1 ORDER BY id",
    )
    .bind("client")
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), mine);
    assert!(rows.iter().all(|(id, text)| &id.to_string() == text));
    let events: Vec<Event> =
        sqlx::query_as("SELECT id, n, source FROM sqlx_events WHERE source = 'client' ORDER BY id")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    for (i, (e, id)) in events.iter().zip(&mine).enumerate() {
        assert_eq!(
            e,
            &Event {
                id: *id,
                n: i as i32,
                source: "client".into()
            }
        );
    }

    // 3. a time window with bound ids: the bursts 2 and 3 of the client's ids, and whatever
    //    server ids fall in the same milliseconds; ordered by the key
    let (from_ms, to_ms) = (mine[N / 4].ms(), mine[3 * N / 4 - 1].ms());
    let (from, to) = (
        Id::min_of_ms(from_ms).unwrap(),
        Id::max_of_ms(to_ms).unwrap(),
    );
    let window: Vec<Event> = sqlx::query_as(
        "SELECT id, n, source FROM sqlx_events WHERE id BETWEEN $1 AND $2 ORDER BY id",
    )
    .bind(from)
    .bind(to)
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let mut expected: Vec<Id> = server
        .iter()
        .chain(&mine)
        .copied()
        .filter(|id| (from_ms..=to_ms).contains(&id.ms()))
        .collect();
    expected.sort();
    assert!(
        expected.len() >= N / 2 && expected.len() < N,
        "{}",
        expected.len()
    );
    assert_eq!(window.iter().map(|e| e.id).collect::<Vec<_>>(), expected);
    // >= and < with the next millisecond's lower bound: the same rows
    let count: i64 =
        sqlx::query_scalar("SELECT count(*) FROM sqlx_events WHERE id >= $1 AND id < $2")
            .bind(from)
            .bind(Id::min_of_ms(to_ms + 1).unwrap())
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(count, expected.len() as i64);

    // 4. equality by id; a string id needs the cast ($1 is sent as text)
    let wanted = mine[1234];
    let one: Event = sqlx::query_as("SELECT id, n, source FROM sqlx_events WHERE id = $1")
        .bind(wanted)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(one.n, 1234);
    for form in [
        wanted.to_string(),
        wanted.to_ulid(),
        wanted.to_uuid_string(),
    ] {
        let by_text: Event =
            sqlx::query_as("SELECT id, n, source FROM sqlx_events WHERE id = $1::hlculid")
                .bind(&form)
                .fetch_one(&mut conn)
                .await
                .unwrap();
        assert_eq!(by_text, one);
    }
    let server_one: Id = sqlx::query_scalar("SELECT id FROM sqlx_events WHERE id = $1")
        .bind(server[N / 2])
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(server_one, server[N / 2]);

    // the plan is an index range scan on the key
    let plan: Vec<String> = sqlx::query_scalar(
        "EXPLAIN (COSTS OFF) SELECT * FROM sqlx_events WHERE id BETWEEN $1 AND $2",
    )
    .bind(from)
    .bind(to)
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(
        plan.iter().any(|l| l.contains("sqlx_events_pkey")),
        "{plan:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn uuid_columns_arrays_and_the_text_protocol() {
    let mut conn = connect().await;
    let mine = client_ids(62);
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS sqlx_uuids;
         CREATE TABLE sqlx_uuids (u uuid PRIMARY KEY)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    // an Id into a uuid column (the hlculid parameter meets the column's cast) and read from one
    for id in &mine[..100] {
        sqlx::query("INSERT INTO sqlx_uuids VALUES ($1)")
            .bind(id)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let rows: Vec<(Id, String)> =
        sqlx::query_as("SELECT u, u::text AS text FROM sqlx_uuids ORDER BY u")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), mine[..100]);
    assert!(rows.iter().all(|(id, text)| &id.to_uuid_string() == text));

    // hlculid[] both ways
    let back: Vec<Id> = sqlx::query_scalar("SELECT $1::hlculid[]")
        .bind(&mine)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(back, mine);

    // the simple query protocol returns text: the same ids
    let rows = sqlx::raw_sql("SELECT u, u::hlculid AS id FROM sqlx_uuids ORDER BY u")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 100);
    for (row, id) in rows.iter().zip(&mine) {
        assert_eq!(row.try_get::<Id, _>(0).unwrap(), *id);
        assert_eq!(row.try_get::<Id, _>(1).unwrap(), *id);
    }

    // a value of another width is an error, not a garbled id; other types are refused
    let err = sqlx::query_scalar::<_, Id>("SELECT '\\x0102'::bytea")
        .fetch_one(&mut conn)
        .await
        .unwrap_err();
    assert!(format!("{err}").contains("mismatched types"), "{err}");
    let err = sqlx::query_scalar::<_, Id>("SELECT 'x'::text")
        .fetch_one(&mut conn)
        .await
        .unwrap_err();
    assert!(format!("{err}").contains("mismatched types"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn bigint_ids_in_a_bigint_key() {
    let mut conn = connect().await;
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS sqlx_orders;
         CREATE TABLE sqlx_orders (id bigint PRIMARY KEY DEFAULT hlculid_generate_bigint(),
                                   n int4 NOT NULL)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    // made by the server, decoded by the crate as the server decodes them
    let ns: Vec<i32> = (0..N as i32).collect();
    let made: Vec<(BigId, i64, i32)> = sqlx::query_as(
        "INSERT INTO sqlx_orders (n) SELECT n FROM unnest($1::int4[]) n
         RETURNING id, (extract(epoch FROM hlculid_bigint_ts(id)) * 1000)::int8,
                   hlculid_bigint_publisher(id)",
    )
    .bind(&ns)
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(made.len(), N);
    for (id, ms, publisher) in &made {
        assert_eq!(id.ms() as i64, *ms);
        assert_eq!(id.publisher() as i32, *publisher);
    }
    // made by the crate, bound as int8[], read back in order and decoded by the server
    let ids = Generator::new(63);
    let mine = ids.generate_bigint_n(N).unwrap();
    sqlx::query("INSERT INTO sqlx_orders (id, n) SELECT * FROM unnest($1::int8[], $2::int4[])")
        .bind(&mine)
        .bind(&ns)
        .execute(&mut conn)
        .await
        .unwrap();
    let back: Vec<(BigId, i32)> = sqlx::query_as(
        "SELECT id, hlculid_bigint_publisher(id) FROM sqlx_orders
         WHERE id BETWEEN $1 AND $2 AND hlculid_bigint_publisher(id) = 63 ORDER BY id",
    )
    .bind(BigId::min_of_ms(mine[0].ms()).unwrap())
    .bind(BigId::max_of_ms(mine[N - 1].ms()).unwrap())
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(back.iter().map(|r| r.0).collect::<Vec<_>>(), mine);
    // a negative bigint is not an id
    let err = sqlx::query_scalar::<_, BigId>("SELECT -5::int8")
        .fetch_one(&mut conn)
        .await
        .unwrap_err();
    assert!(format!("{err}").contains("negative"), "{err}");
}
