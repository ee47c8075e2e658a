//! The crate against a real server with the extension (feature `postgres`, tokio-postgres):
//! scripts/clients.sh starts one and runs these with `--ignored` and HLCULID_TEST_DSN set.
//! The server's text and binary forms of the same ids equal the crate's; parameters, binary COPY
//! in and out, range queries with bound ids, and `uuid` columns.

use futures_util::{pin_mut, TryStreamExt};
use hlculid_core::{Generator, Id};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio_postgres::binary_copy::{BinaryCopyInWriter, BinaryCopyOutStream};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls};

const N: usize = 10_000;

async fn connect() -> Client {
    let dsn = std::env::var("HLCULID_TEST_DSN")
        .expect("HLCULID_TEST_DSN: these tests need a server with hlculid (scripts/clients.sh)");
    let (client, connection) = tokio_postgres::connect(&dsn, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS hlculid")
        .await
        .unwrap();
    client
}

async fn hlculid_type(client: &Client) -> Type {
    client.prepare("SELECT $1::hlculid").await.unwrap().params()[0].clone()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn server_and_crate_print_and_read_the_same_ids() {
    let client = connect().await;
    // ids made by the server, read in binary and in text
    let rows = client
        .query(
            "SELECT id, id::text, hlculid_to_ulid(id), id::uuid::text
             FROM (SELECT hlculid_generate() AS id FROM generate_series(1, $1::int)) s",
            &[&(N as i32)],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), N);
    for r in &rows {
        let id: Id = r.get(0);
        assert_eq!(id.to_string(), r.get::<_, String>(1));
        assert_eq!(id.to_ulid(), r.get::<_, String>(2));
        assert_eq!(id.to_uuid_string(), r.get::<_, String>(3));
        assert_eq!(r.get::<_, String>(1).parse::<Id>().unwrap(), id);
    }
    // ids made by the crate, sent in binary, printed and decoded by the server
    let ids = Generator::new(33);
    let mine: Vec<Id> = (0..N).map(|_| ids.generate().unwrap()).collect();
    let rows = client
        .query(
            "SELECT x::text, hlculid_to_ulid(x), hlculid_publisher(x), hlculid_counter(x),
                    hlculid_random(x), (extract(epoch FROM hlculid_ts(x)) * 1000)::int8
             FROM unnest($1::hlculid[]) WITH ORDINALITY AS u(x, i) ORDER BY i",
            &[&mine],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), N);
    for (id, r) in mine.iter().zip(&rows) {
        assert_eq!(id.to_string(), r.get::<_, String>(0));
        assert_eq!(id.to_ulid(), r.get::<_, String>(1));
        assert_eq!(id.publisher() as i32, r.get::<_, i32>(2));
        assert_eq!(id.counter() as i32, r.get::<_, i32>(3));
        assert_eq!(id.random() as i64, r.get::<_, i64>(4));
        assert_eq!(id.ms() as i64, r.get::<_, i64>(5));
    }
    // and text input of every form the crate prints gives the same id
    let id = mine[0];
    for form in [id.to_string(), id.to_ulid(), id.to_uuid_string()] {
        let back: Id = client
            .query_one("SELECT $1::text::hlculid", &[&form])
            .await
            .unwrap()
            .get(0);
        assert_eq!(back, id);
    }
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn parameters_binary_copy_and_time_windows() {
    let client = connect().await;
    client
        .batch_execute(
            "DROP TABLE IF EXISTS crate_events;
             CREATE TABLE crate_events (id hlculid PRIMARY KEY, n int4, u uuid)",
        )
        .await
        .unwrap();
    let ids = Generator::new(34);
    let start_ms = now_ms();
    let mine: Vec<Id> = (0..N).map(|_| ids.generate().unwrap()).collect();

    // parameters, into an hlculid and a uuid column
    let insert = client
        .prepare("INSERT INTO crate_events VALUES ($1, $2, $3)")
        .await
        .unwrap();
    for (i, id) in mine.iter().take(1000).enumerate() {
        client
            .execute(&insert, &[id, &(i as i32), id])
            .await
            .unwrap();
    }
    // binary COPY in
    let ty = hlculid_type(&client).await;
    let sink = client
        .copy_in("COPY crate_events (id, n, u) FROM STDIN BINARY")
        .await
        .unwrap();
    let writer = BinaryCopyInWriter::new(sink, &[ty.clone(), Type::INT4, Type::UUID]);
    pin_mut!(writer);
    for (i, id) in mine.iter().enumerate().skip(1000) {
        writer.as_mut().write(&[id, &(i as i32), id]).await.unwrap();
    }
    writer.finish().await.unwrap();

    // binary COPY out, in id order: exactly what was written, in generation order
    let stream = client
        .copy_out("COPY (SELECT id, n, u FROM crate_events ORDER BY id) TO STDOUT BINARY")
        .await
        .unwrap();
    let rows: Vec<_> = BinaryCopyOutStream::new(stream, &[ty, Type::INT4, Type::UUID])
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rows.len(), N);
    for (i, (row, id)) in rows.iter().zip(&mine).enumerate() {
        assert_eq!(row.get::<Id>(0), *id);
        assert_eq!(row.get::<i32>(1), i as i32);
        assert_eq!(row.get::<Id>(2), *id);
    }

    // a time window with bound ids, as an index range scan
    let from = Id::min_of_ms(start_ms).unwrap();
    let to = Id::max_of_ms(now_ms()).unwrap();
    let count: i64 = client
        .query_one(
            "SELECT count(*) FROM crate_events WHERE id BETWEEN $1 AND $2",
            &[&from, &to],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, N as i64);
    let middle = mine[N / 2];
    let after: i64 = client
        .query_one(
            "SELECT count(*) FROM crate_events WHERE id > $1",
            &[&middle],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(after, (N - N / 2 - 1) as i64);
    let plan: Vec<String> = client
        .query(
            "EXPLAIN (COSTS OFF) SELECT * FROM crate_events WHERE id BETWEEN $1 AND $2",
            &[&from, &to],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(
        plan.iter().any(|l| l.contains("crate_events_pkey")),
        "{plan:?}"
    );
    // a wrong-sized value from a bytea column is an error, not a garbled id
    let err = client
        .query_one("SELECT '\\x0102'::bytea", &[])
        .await
        .unwrap()
        .try_get::<_, Id>(0);
    assert!(err.is_err());
}
