//! The crate against a real server with the extension (feature `postgres`, tokio-postgres):
//! scripts/clients.sh starts one and runs these with `--ignored` and HLCULID_TEST_DSN set.
//! The server's text and binary forms of the same ids equal the crate's; parameters, binary COPY
//! in and out, range queries with bound ids, and `uuid` columns. bigint ids: the server's and the
//! crate's decode the same, both ways, through `bigint` columns, and JSON carries them as strings.

use futures_util::{pin_mut, TryStreamExt};
use hlculid_core::{BigId, Generator, Id};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio_postgres::binary_copy::{BinaryCopyInWriter, BinaryCopyOutStream};
use tokio_postgres::types::Type;
mod common;

use common::connect;
use tokio_postgres::Client;

const N: usize = 10_000;

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
    // the recipe: `id <@ tstzrange($1, $2)` with SystemTime parameters, estimated by the planner
    let (t1, t2) = (
        UNIX_EPOCH + std::time::Duration::from_millis(start_ms),
        UNIX_EPOCH + std::time::Duration::from_millis(now_ms() + 1),
    );
    let count: i64 = client
        .query_one(
            "SELECT count(*) FROM crate_events WHERE id <@ tstzrange($1, $2)",
            &[&t1, &t2],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, N as i64);
    let (t3, t4) = (t2, t2 + std::time::Duration::from_secs(3600));
    let none: i64 = client
        .query_one(
            "SELECT count(*) FROM crate_events WHERE id <@ tstzrange($1, $2)",
            &[&t3, &t4],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(none, 0);
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

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn server_bigint_ids_decode_in_the_crate_as_in_the_server() {
    let client = connect().await;
    let rows = client
        .query(
            "SELECT b, b::text, (extract(epoch FROM hlculid_bigint_ts(b)) * 1000)::int8,
                    hlculid_bigint_counter(b), hlculid_bigint_publisher(b), hlculid_from_bigint(b),
                    hlculid_bigint_min(hlculid_bigint_ts(b)), hlculid_bigint_max(hlculid_bigint_ts(b))
             FROM (SELECT 1 AS part, i, hlculid_generate_bigint() AS b
                   FROM generate_series(1, $1::int / 2) i
                   UNION ALL
                   SELECT 2, i, b
                   FROM unnest(hlculid_generate_bigint_n($1::int / 2)) WITH ORDINALITY u(b, i)) s
             ORDER BY part, i",
            &[&(N as i32)],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), N);
    let mut publishers = std::collections::BTreeSet::new();
    for r in &rows {
        let b: BigId = r.get(0);
        assert_eq!(b.to_i64(), r.get::<_, i64>(0));
        assert_eq!(b.to_string(), r.get::<_, String>(1));
        assert_eq!(r.get::<_, String>(1).parse::<BigId>().unwrap(), b);
        assert_eq!(b.ms() as i64, r.get::<_, i64>(2));
        assert_eq!(b.counter() as i32, r.get::<_, i32>(3));
        assert_eq!(b.publisher() as i32, r.get::<_, i32>(4));
        assert_eq!(b.to_id(), r.get::<_, Id>(5));
        assert_eq!(BigId::min_of_ms(b.ms()).unwrap(), r.get::<_, BigId>(6));
        assert_eq!(BigId::max_of_ms(b.ms()).unwrap(), r.get::<_, BigId>(7));
        publishers.insert(b.publisher());
    }
    // the ids are the server's (publisher 50 in scripts/clients.sh), increasing in the order each
    // part made them (a parallel append may interleave the two parts' rows), all distinct
    assert_eq!(publishers.into_iter().collect::<Vec<_>>(), [50]);
    let ids: Vec<BigId> = rows.iter().map(|r| r.get(0)).collect();
    let (one, batch) = ids.split_at(N / 2);
    assert!(one.windows(2).all(|w| w[0] < w[1]));
    assert!(batch.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        ids.iter().collect::<std::collections::BTreeSet<_>>().len(),
        N
    );
    // a negative bigint is not an id: an error, not a garbled id
    let err = client
        .query_one("SELECT -5::int8", &[])
        .await
        .unwrap()
        .try_get::<_, BigId>(0)
        .unwrap_err();
    assert!(format!("{err:?}").contains("negative"), "{err:?}");
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn crate_bigint_ids_go_into_bigint_columns_and_decode_in_the_server() {
    let client = connect().await;
    client
        .batch_execute(
            "DROP TABLE IF EXISTS crate_big;
             CREATE TABLE crate_big (id bigint PRIMARY KEY, n int4)",
        )
        .await
        .unwrap();
    let ids = Generator::new(36);
    let start_ms = now_ms();
    let mut mine: Vec<BigId> = (0..N / 2).map(|_| ids.generate_bigint().unwrap()).collect();
    mine.extend(ids.generate_bigint_n(N - N / 2).unwrap());
    assert!(mine.windows(2).all(|w| w[0] < w[1]));

    // parameters, then binary COPY in
    let insert = client
        .prepare("INSERT INTO crate_big VALUES ($1, $2)")
        .await
        .unwrap();
    for (i, id) in mine.iter().take(1000).enumerate() {
        client.execute(&insert, &[id, &(i as i32)]).await.unwrap();
    }
    let sink = client
        .copy_in("COPY crate_big (id, n) FROM STDIN BINARY")
        .await
        .unwrap();
    let writer = BinaryCopyInWriter::new(sink, &[Type::INT8, Type::INT4]);
    pin_mut!(writer);
    for (i, id) in mine.iter().enumerate().skip(1000) {
        writer.as_mut().write(&[id, &(i as i32)]).await.unwrap();
    }
    writer.finish().await.unwrap();

    // the server orders and decodes them as the crate does
    let rows = client
        .query(
            "SELECT id, n, id::text, (extract(epoch FROM hlculid_bigint_ts(id)) * 1000)::int8,
                    hlculid_bigint_counter(id), hlculid_bigint_publisher(id),
                    hlculid_from_bigint(id)::text
             FROM crate_big ORDER BY 1",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), N);
    for (i, (r, id)) in rows.iter().zip(&mine).enumerate() {
        assert_eq!(r.get::<_, BigId>(0), *id);
        assert_eq!(r.get::<_, i32>(1), i as i32);
        assert_eq!(r.get::<_, String>(2), id.to_string());
        assert_eq!(r.get::<_, i64>(3), id.ms() as i64);
        assert_eq!(r.get::<_, i32>(4), id.counter() as i32);
        assert_eq!(r.get::<_, i32>(5), 36);
        assert_eq!(r.get::<_, String>(6), id.to_id().to_string());
    }

    // an array parameter, and a time window with bound ids
    let back: Vec<BigId> = client
        .query_one(
            "SELECT array_agg(x ORDER BY x) FROM unnest($1::int8[]) x",
            &[&mine],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(back, mine);
    let from = BigId::min_of_ms(start_ms).unwrap();
    let to = BigId::max_of_ms(now_ms()).unwrap();
    let count: i64 = client
        .query_one(
            "SELECT count(*) FROM crate_big WHERE id BETWEEN $1 AND $2",
            &[&from, &to],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, N as i64);

    // one clock for both widths: 128-bit ids made between bigint ids sort between them (through
    // hlculid_from_bigint), and the server narrows them as the crate does
    let mut both = Vec::new();
    for _ in 0..1000 {
        both.push(ids.generate().unwrap());
        both.push(ids.generate_bigint().unwrap().to_id());
    }
    let rows = client
        .query(
            "SELECT x, hlculid_to_bigint(x) FROM unnest($1::hlculid[]) WITH ORDINALITY u(x, i)
             ORDER BY x",
            &[&both],
        )
        .await
        .unwrap();
    for (r, id) in rows.iter().zip(&both) {
        assert_eq!(r.get::<_, Id>(0), *id);
        assert_eq!(r.get::<_, BigId>(1), BigId::from_id(*id).unwrap());
    }
}

#[cfg(feature = "serde")]
#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn bigint_ids_travel_in_json_as_decimal_strings() {
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Event {
        id: BigId,
        kind: String,
    }
    let client = connect().await;
    let id = Generator::new(37).generate_bigint().unwrap();
    let event = Event {
        id,
        kind: "created".into(),
    };
    // the crate writes the id as a string; the server reads it back as the same bigint
    let json = serde_json::to_string(&event).unwrap();
    assert_eq!(
        json,
        format!(r#"{{"id":"{}","kind":"created"}}"#, id.to_i64())
    );
    let r = client
        .query_one(
            "SELECT ($1::text::jsonb->>'id')::int8, jsonb_typeof($1::text::jsonb->'id')",
            &[&json],
        )
        .await
        .unwrap();
    assert_eq!(r.get::<_, BigId>(0), id);
    assert_eq!(r.get::<_, String>(1), "string");
    // the server's JSON of a server-made id, with id::text, reads back in the crate
    let r = client
        .query_one(
            "SELECT b, jsonb_build_object('id', b::text, 'kind', 'created')::text,
                    to_jsonb(b)::text
             FROM (SELECT hlculid_generate_bigint() AS b) s",
            &[],
        )
        .await
        .unwrap();
    let server_id: BigId = r.get(0);
    let event: Event = serde_json::from_str(&r.get::<_, String>(1)).unwrap();
    assert_eq!(event.id, server_id);
    // to_jsonb(bigint) is a JSON number, which a JavaScript reader would round: refused
    let number: String = r.get(2);
    assert_eq!(number, server_id.to_string());
    assert!(serde_json::from_str::<BigId>(&number).is_err());
    assert_ne!(
        (server_id.to_i64() as f64) as i64,
        server_id.to_i64(),
        "a double cannot hold this id"
    );
}
