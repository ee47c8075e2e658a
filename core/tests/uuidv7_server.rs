//! The crate's UUIDv7 form against a real server with the extension (text only, so no crate
//! feature is needed): scripts/clients.sh runs these with `--ignored` and HLCULID_TEST_DSN set
//! (tests/clients/test_uuidv7.py). 10,000 ids each way: the server's `hlculid_to_uuidv7` and
//! `hlculid_from_uuidv7` equal `Id::to_uuidv7_bytes` and `Id::from_uuidv7_bytes`, the `uuid`
//! crate reads the form as version 7, and both sides refuse the same other uuids.

use hlculid_core::{Generator, Id};
mod common;

use common::connect;

const N: usize = 10_000;

fn v7_of(id: Id) -> uuid::Uuid {
    uuid::Uuid::from_bytes(id.to_uuidv7_bytes())
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn server_and_crate_make_the_same_uuidv7() {
    let client = connect().await;
    // ids made by the server, with its v7 form
    let rows = client
        .query(
            "SELECT id::text, hlculid_to_uuidv7(id)::text
             FROM (SELECT hlculid_generate() AS id FROM generate_series(1, $1::int)) s ORDER BY id",
            &[&(N as i32)],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), N);
    let mut previous = None;
    for r in &rows {
        let id: Id = r.get::<_, &str>(0).parse().unwrap();
        let theirs = uuid::Uuid::parse_str(r.get(1)).unwrap();
        let ours = v7_of(id);
        assert_eq!(ours, theirs, "{id}");
        assert_eq!(ours.get_version_num(), 7);
        assert_eq!(ours.get_variant(), uuid::Variant::RFC4122);
        assert!(previous < Some(ours), "in the order of the ids");
        previous = Some(ours);
    }
    // ids made by the crate (another publisher), converted by the server
    let ids = Generator::new(35);
    let mine: Vec<String> = (0..N)
        .map(|_| ids.generate().unwrap().to_string())
        .collect();
    let rows = client
        .query(
            "SELECT hlculid_to_uuidv7(x::hlculid)::text
             FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i",
            &[&mine],
        )
        .await
        .unwrap();
    for (id, r) in mine.iter().zip(&rows) {
        assert_eq!(v7_of(id.parse().unwrap()).to_string(), r.get::<_, &str>(0));
    }
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs a server: scripts/clients.sh"]
async fn server_and_crate_read_the_same_uuidv7() {
    let client = connect().await;
    // any v7 uuid: the uuid crate's own (increasing), and the crate's form of its ids
    let ids = Generator::new(36);
    let mut uuids: Vec<uuid::Uuid> = (0..N / 2).map(|_| uuid::Uuid::now_v7()).collect();
    uuids.extend((0..N / 2).map(|_| v7_of(ids.generate().unwrap())));
    let text: Vec<String> = uuids.iter().map(|u| u.to_string()).collect();
    let rows = client
        .query(
            "SELECT hlculid_from_uuidv7(x::uuid)::text
             FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i",
            &[&text],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), N);
    for (u, r) in uuids.iter().zip(&rows) {
        let ours = Id::from_uuidv7_bytes(*u.as_bytes()).unwrap();
        assert_eq!(ours.to_string(), r.get::<_, &str>(0), "{u}");
    }
    // the uuid crate's v7 values, made in increasing order, read as increasing ids
    let read: Vec<Id> = uuids[..N / 2]
        .iter()
        .map(|u| Id::from_uuidv7_bytes(*u.as_bytes()).unwrap())
        .collect();
    assert!(read.windows(2).all(|w| w[0] < w[1]));
    // both refuse the same other uuids
    for other in [
        uuid::Uuid::parse_str("8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203").unwrap(), // version 4
        uuid::Uuid::nil(),
        uuid::Uuid::max(),
        uuid::Uuid::from_bytes(ids.generate().unwrap().to_bytes()),
    ] {
        assert!(Id::from_uuidv7_bytes(*other.as_bytes()).is_err(), "{other}");
        let err = client
            .query_one(
                "SELECT hlculid_from_uuidv7($1::text::uuid)",
                &[&other.to_string()],
            )
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            Some(&tokio_postgres::error::SqlState::INVALID_PARAMETER_VALUE),
            "{other}"
        );
    }
}
