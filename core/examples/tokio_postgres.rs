//! Ids made in the application, stored and read back through tokio-postgres in binary, and a
//! time-window query with bound ids.
//!
//! cargo run -p hlculid-core --features postgres --example tokio_postgres -- "host=/tmp user=postgres"

use hlculid_core::{Generator, Id};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio_postgres::NoTls;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dsn = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "host=/tmp user=postgres".into());
    let (client, connection) = tokio_postgres::connect(&dsn, NoTls).await?;
    tokio::spawn(connection);

    client
        .batch_execute("CREATE TEMP TABLE events (id hlculid PRIMARY KEY, body text)")
        .await?;
    let ids = Generator::new(21);
    for i in 0..100 {
        let id = ids.generate()?;
        client
            .execute(
                "INSERT INTO events VALUES ($1, $2)",
                &[&id, &format!("event {i}")],
            )
            .await?;
    }

    // The last second, as bounds an index range scan can use.
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis() as u64;
    let from = Id::min_of_ms(now - Duration::from_secs(1).as_millis() as u64).unwrap();
    let to = Id::max_of_ms(now).unwrap();
    let rows = client
        .query(
            "SELECT id FROM events WHERE id BETWEEN $1 AND $2 ORDER BY id",
            &[&from, &to],
        )
        .await?;
    let read: Vec<Id> = rows.iter().map(|r| r.get(0)).collect();
    println!(
        "{} events in the last second, first {}",
        read.len(),
        read[0]
    );
    Ok(())
}
