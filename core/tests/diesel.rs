//! The diesel recipe (feature `diesel`) against a real server with the extension:
//! scripts/clients.sh starts one and runs these with `--ignored` and HLCULID_TEST_DSN set. A
//! `table!` whose key is `hlculid DEFAULT hlculid_generate()`, `Queryable`/`Selectable`/
//! `Insertable` models with an `Id` field: 10,000 ids made by the server and 10,000 by the
//! crate's `Generator`, read back equal to the server's text form; a time window with
//! `between(min, max)`; ordering; lookups by id and by string; `uuid` columns; bigint ids.

use diesel::prelude::*;
use diesel::sql_types::{Int4, Text};
use hlculid_core::diesel::Hlculid;
use hlculid_core::{BigId, Generator, Id};
use std::time::Duration;

const N: usize = 10_000;

diesel::table! {
    use diesel::sql_types::*;
    use hlculid_core::diesel::Hlculid;

    diesel_events (id) {
        id -> Hlculid,
        n -> Int4,
        source -> Text,
        copy -> Nullable<Uuid>,
    }
}

diesel::table! {
    diesel_orders (id) {
        id -> BigInt,
        n -> Int4,
    }
}

/// The model: the key is the library's `Id`, the `uuid` column too.
#[derive(Queryable, Selectable, Insertable, Debug, PartialEq)]
#[diesel(table_name = diesel_events, check_for_backend(diesel::pg::Pg))]
struct Event {
    id: Id,
    n: i32,
    source: String,
    copy: Option<Id>,
}

/// A row whose key the server's default makes.
#[derive(Insertable)]
#[diesel(table_name = diesel_events)]
struct NewEvent {
    n: i32,
    source: &'static str,
}

#[derive(Queryable, Selectable, Insertable, Debug, PartialEq)]
#[diesel(table_name = diesel_orders, check_for_backend(diesel::pg::Pg))]
struct Order {
    id: BigId,
    n: i32,
}

#[derive(QueryableByName, Debug)]
struct Plan {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    line: String,
}

#[derive(QueryableByName, Debug, PartialEq)]
struct ByText {
    #[diesel(sql_type = Int4)]
    n: i32,
}

fn connect() -> PgConnection {
    let dsn = std::env::var("HLCULID_TEST_DSN")
        .expect("HLCULID_TEST_DSN: these tests need a server with hlculid (scripts/clients.sh)");
    let mut conn = PgConnection::establish(&dsn).unwrap();
    diesel::sql_query("CREATE EXTENSION IF NOT EXISTS hlculid")
        .execute(&mut conn)
        .unwrap();
    conn
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
#[ignore = "needs a server: scripts/clients.sh"]
fn a_model_with_an_hlculid_key() {
    use crate::diesel_events::dsl::*;
    let mut conn = connect();
    diesel::sql_query("DROP TABLE IF EXISTS diesel_events")
        .execute(&mut conn)
        .unwrap();
    diesel::sql_query(
        "CREATE TABLE diesel_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(),
                                     n int4 NOT NULL, source text NOT NULL, copy uuid)",
    )
    .execute(&mut conn)
    .unwrap();

    // 1. the server default makes the ids; RETURNING reads them as Id, each equal to the
    //    server's own text form, increasing in insertion order
    let rows: Vec<NewEvent> = (0..N as i32)
        .map(|i| NewEvent {
            n: i,
            source: "server",
        })
        .collect();
    let made: Vec<(Id, i32)> = diesel::insert_into(diesel_events)
        .values(&rows)
        .returning((id, n))
        .get_results(&mut conn)
        .unwrap();
    assert_eq!(made.len(), N);
    let mut server: Vec<(i32, Id)> = made.iter().map(|(i, k)| (*k, *i)).collect();
    server.sort();
    let server: Vec<Id> = server.into_iter().map(|(_, i)| i).collect();
    assert!(server.windows(2).all(|w| w[0] < w[1]));
    let texts: Vec<(Id, String)> = diesel_events
        .select((id, diesel::dsl::sql::<Text>("id::text")))
        .filter(source.eq("server"))
        .order(id)
        .load(&mut conn)
        .unwrap();
    assert_eq!(texts.iter().map(|t| t.0).collect::<Vec<_>>(), server);
    assert!(texts.iter().all(|(i, t)| &i.to_string() == t));
    assert!(server.iter().all(|i| i.publisher() == 50)); // hlculid.publisher_id in scripts/clients.sh

    // 2. ids made by the crate, inserted through the model (the uuid column holds the same id)
    let mine = client_ids(71);
    let events: Vec<Event> = mine
        .iter()
        .enumerate()
        .map(|(i, k)| Event {
            id: *k,
            n: i as i32,
            source: "client".into(),
            copy: Some(*k),
        })
        .collect();
    // 4 columns a row: two statements keep under PostgreSQL's 65,535 parameters
    for chunk in events.chunks(N / 2) {
        let inserted = diesel::insert_into(diesel_events)
            .values(chunk)
            .execute(&mut conn)
            .unwrap();
        assert_eq!(inserted, chunk.len());
    }
    // read back into the model, in key order: the client's order; the server prints them as
    // the crate does
    let back: Vec<Event> = diesel_events
        .filter(source.eq("client"))
        .order(id.asc())
        .select(Event::as_select())
        .load(&mut conn)
        .unwrap();
    assert_eq!(back, events);
    let texts: Vec<(String, String)> = diesel_events
        .select((
            diesel::dsl::sql::<Text>("id::text"),
            diesel::dsl::sql::<Text>("copy::text"),
        ))
        .filter(source.eq("client"))
        .order(id)
        .load(&mut conn)
        .unwrap();
    for ((t, u), k) in texts.iter().zip(&mine) {
        assert_eq!(t, &k.to_string());
        assert_eq!(u, &k.to_uuid_string());
    }

    // 3. a time window with bound ids: the client's bursts 2 and 3, and whatever server ids
    //    fall in the same milliseconds; ordered by the key
    let (from_ms, to_ms) = (mine[N / 4].ms(), mine[3 * N / 4 - 1].ms());
    let (lo, hi) = (
        Id::min_of_ms(from_ms).unwrap(),
        Id::max_of_ms(to_ms).unwrap(),
    );
    let window: Vec<Id> = diesel_events
        .select(id)
        .filter(id.between(lo, hi))
        .order(id)
        .load(&mut conn)
        .unwrap();
    let mut expected: Vec<Id> = server
        .iter()
        .chain(&mine)
        .copied()
        .filter(|k| (from_ms..=to_ms).contains(&k.ms()))
        .collect();
    expected.sort();
    assert!(
        expected.len() >= N / 2 && expected.len() < N,
        "{}",
        expected.len()
    );
    assert_eq!(window, expected);
    let count: i64 = diesel_events
        .filter(id.ge(lo).and(id.lt(Id::min_of_ms(to_ms + 1).unwrap())))
        .count()
        .get_result(&mut conn)
        .unwrap();
    assert_eq!(count, expected.len() as i64);
    // descending, through the uuid column
    let desc: Vec<Option<Id>> = diesel_events
        .select(copy)
        .filter(copy.is_not_null())
        .order(copy.desc())
        .load(&mut conn)
        .unwrap();
    assert!(desc
        .iter()
        .rev()
        .map(|k| k.unwrap())
        .eq(mine.iter().copied()));

    // 4. equality by id (find and eq); a string id is parsed into an Id, or cast in SQL
    let wanted = mine[1234];
    let one: Event = diesel_events
        .find(wanted)
        .select(Event::as_select())
        .first(&mut conn)
        .unwrap();
    assert_eq!(one, events[1234]);
    let by_copy: i32 = diesel_events
        .select(n)
        .filter(copy.eq(wanted))
        .first(&mut conn)
        .unwrap();
    assert_eq!(by_copy, 1234);
    for form in [
        wanted.to_string(),
        wanted.to_ulid(),
        wanted.to_uuid_string(),
    ] {
        let parsed: Id = form.parse().unwrap();
        let k: i32 = diesel_events
            .select(n)
            .filter(id.eq(parsed))
            .first(&mut conn)
            .unwrap();
        assert_eq!(k, 1234);
        let by_text: Vec<ByText> =
            diesel::sql_query("SELECT n FROM diesel_events WHERE id = $1::hlculid")
                .bind::<Text, _>(&form)
                .load(&mut conn)
                .unwrap();
        assert_eq!(by_text, [ByText { n: 1234 }]);
    }
    let k: i32 = diesel_events
        .select(n)
        .filter(id.eq(server[N / 2]))
        .first(&mut conn)
        .unwrap();
    assert_eq!(k, (N / 2) as i32);

    // the window is an index range scan on the key
    let plan: Vec<Plan> = diesel::sql_query(
        "EXPLAIN (COSTS OFF) SELECT * FROM diesel_events WHERE id BETWEEN $1 AND $2",
    )
    .bind::<Hlculid, _>(lo)
    .bind::<Hlculid, _>(hi)
    .load(&mut conn)
    .unwrap();
    assert!(
        plan.iter().any(|p| p.line.contains("diesel_events_pkey")),
        "{plan:?}"
    );
}

#[test]
#[ignore = "needs a server: scripts/clients.sh"]
fn bigint_ids_in_a_bigint_key() {
    use crate::diesel_orders::dsl::*;
    let mut conn = connect();
    diesel::sql_query("DROP TABLE IF EXISTS diesel_orders")
        .execute(&mut conn)
        .unwrap();
    diesel::sql_query(
        "CREATE TABLE diesel_orders (id bigint PRIMARY KEY DEFAULT hlculid_generate_bigint(),
                                     n int4 NOT NULL)",
    )
    .execute(&mut conn)
    .unwrap();
    // made by the server, decoded by the crate as the server decodes them
    let made: Vec<BigId> = diesel::insert_into(diesel_orders)
        .values((0..N as i32).map(|i| n.eq(i)).collect::<Vec<_>>())
        .returning(id)
        .get_results(&mut conn)
        .unwrap();
    assert_eq!(made.len(), N);
    let decoded: Vec<(BigId, i32)> = diesel_orders
        .select((
            id,
            diesel::dsl::sql::<diesel::sql_types::Int4>("hlculid_bigint_publisher(id)"),
        ))
        .order(id)
        .load(&mut conn)
        .unwrap();
    assert!(decoded
        .iter()
        .all(|(b, p)| b.publisher() as i32 == *p && *p == 50));
    // made by the crate, through the model, read back in order in a window
    let ids = Generator::new(73);
    let mine: Vec<Order> = ids
        .generate_bigint_n(N)
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(i, b)| Order { id: b, n: i as i32 })
        .collect();
    diesel::insert_into(diesel_orders)
        .values(&mine)
        .execute(&mut conn)
        .unwrap();
    let back: Vec<Order> = diesel_orders
        .filter(id.between(
            BigId::min_of_ms(mine[0].id.ms()).unwrap(),
            BigId::max_of_ms(mine[N - 1].id.ms()).unwrap(),
        ))
        .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(
            "hlculid_bigint_publisher(id) = 73",
        ))
        .order(id)
        .select(Order::as_select())
        .load(&mut conn)
        .unwrap();
    assert_eq!(back, mine);
    // a negative bigint is not an id
    let err = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>("-5::int8"))
        .get_result::<BigId>(&mut conn)
        .unwrap_err();
    assert!(format!("{err:?}").contains("negative"), "{err:?}");
}
