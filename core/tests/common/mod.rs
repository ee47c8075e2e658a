//! What the server-backed tests share: a client of the server scripts/clients.sh started.

use tokio_postgres::{Client, NoTls};

/// A client of the server named by HLCULID_TEST_DSN, with the extension created.
pub async fn connect() -> Client {
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
