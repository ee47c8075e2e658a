//! A named consumer of an hlculid table with tokio-postgres (feature `consumer`): the server keeps
//! its position; [`Consumer::run`] waits for rows (`hlculid_consumer_wait` sleeps until a commit
//! makes some readable), takes the next batch (`hlculid_consume`) and calls the [`Handler`] inside
//! the same transaction, so what the handler writes through it happens exactly once with the move
//! of the position. A handler that fails: the batch rolls back (its rows come again) and the same
//! rows are handled one by one under savepoints; a row that still fails is scheduled for a retry
//! with `hlculid_consume_retry` (past the consumer's `max_attempts`: a dead letter) and the
//! consumer moves on.
//!
//! ```no_run
//! # async fn f() -> Result<(), tokio_postgres::Error> {
//! use hlculid_core::consumer::{BoxError, Consumer, Handler};
//! use tokio_postgres::{NoTls, Row, Transaction};
//!
//! struct Mailer;
//! impl Handler for Mailer {
//!     async fn handle(&mut self, tx: &Transaction<'_>, rows: &[Row]) -> Result<(), BoxError> {
//!         for r in rows {
//!             let id: hlculid_core::Id = r.get("id");
//!             tx.execute("INSERT INTO mail_outbox (event_id) VALUES ($1)", &[&id]).await?;
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let (client, conn) = tokio_postgres::connect("host=/run/postgresql dbname=app", NoTls).await?;
//! tokio::spawn(conn);
//! let mut consumer = Consumer::new(client, "events", "mailer").await?;
//! let stop = consumer.handle(); // stop.stop().await from a signal task; stop.lag() to export
//! consumer.run(&mut Mailer).await?;
//! # Ok(()) }
//! ```

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{CancelToken, Client, NoTls, Row, Transaction};

use crate::Id;

/// A handler's error: any error; the row or batch it failed on is retried.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a consumer does with its rows: called once per batch inside the batch's transaction, and
/// with one row at a time under a savepoint after a batch failed.
pub trait Handler {
    fn handle(
        &mut self,
        tx: &Transaction<'_>,
        rows: &[Row],
    ) -> impl Future<Output = Result<(), BoxError>> + Send;
}

/// The loop's settings; the `start_*`, `max_attempts` and `id_column` ones apply when this
/// creates the consumer (an existing consumer keeps its own).
#[derive(Clone, Debug)]
pub struct ConsumerOptions {
    /// Rows a batch takes at most (1000).
    pub batch_size: i32,
    /// How long one `hlculid_consumer_wait` sleeps at most (30 s).
    pub wait_timeout: Duration,
    /// How long before a failed row comes again (10 s).
    pub retry_delay: Duration,
    /// Attempts before a row becomes a dead letter (None: the server's default, 5).
    pub max_attempts: Option<i32>,
    /// Start after this id.
    pub start_after: Option<Id>,
    /// Start at this time (`SystemTime::now()`: from now).
    pub start_at: Option<SystemTime>,
    /// The table's id column ("id").
    pub id_column: String,
}

impl Default for ConsumerOptions {
    fn default() -> Self {
        ConsumerOptions {
            batch_size: 1000,
            wait_timeout: Duration::from_secs(30),
            retry_delay: Duration::from_secs(10),
            max_attempts: None,
            start_after: None,
            start_at: None,
            id_column: "id".into(),
        }
    }
}

const IDLE: u8 = 0;
const WAITING: u8 = 1;
const BUSY: u8 = 2;

struct Shared {
    stopping: AtomicBool,
    cancelled: AtomicBool,
    state: AtomicU8,
    lag_bits: AtomicU64,
    cancel: CancelToken,
}

/// A handle to a running consumer, for another task: [`stop`](StopHandle::stop) and
/// [`lag`](StopHandle::lag).
#[derive(Clone)]
pub struct StopHandle(Arc<Shared>);

impl StopHandle {
    /// Ends `run` after the batch in hand (which commits); a wait in progress is cancelled
    /// (through the connection's cancel token, without TLS).
    pub async fn stop(&self) {
        let s = &self.0;
        s.stopping.store(true, Ordering::SeqCst);
        if s.state.load(Ordering::SeqCst) == WAITING {
            s.cancelled.store(true, Ordering::SeqCst);
            // a failed cancel leaves the wait to end at its timeout
            let _ = s.cancel.cancel_query(NoTls).await;
        }
    }

    /// How far behind the consumer is, in seconds: 0 after a batch that took every readable row
    /// (or a wait that timed out), else the age of the last row it took (the time in its id
    /// against this machine's clock); None before the first batch.
    pub fn lag(&self) -> Option<f64> {
        let v = f64::from_bits(self.0.lag_bits.load(Ordering::Relaxed));
        (!v.is_nan()).then_some(v)
    }
}

/// Counts of what this consumer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub consumed: u64,
    pub retried: u64,
    pub dead_lettered: u64,
}

/// The consumer `name` of `table` on one connection.
pub struct Consumer {
    client: Client,
    name: String,
    row_type: String,
    options: ConsumerOptions,
    shared: Arc<Shared>,
    counts: Counts,
}

impl Consumer {
    /// The consumer `name` of `table` (its name, schema-qualified if needed), created at the
    /// start of the table if it does not exist.
    pub async fn new(
        client: Client,
        table: &str,
        name: &str,
    ) -> Result<Self, tokio_postgres::Error> {
        Self::with_options(client, table, name, ConsumerOptions::default()).await
    }

    pub async fn with_options(
        client: Client,
        table: &str,
        name: &str,
        options: ConsumerOptions,
    ) -> Result<Self, tokio_postgres::Error> {
        // regclass's text is the name quoted as needed, so it is safe to splice as a type
        let row_type: String = client
            .query_one("SELECT $1::text::regclass::text", &[&table])
            .await?
            .get(0);
        let mut sql = "SELECT pg_catalog.hlculid_consumer_create($1, $2::text::regclass, id_column => $3::text::name".to_string();
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&name, &table, &options.id_column];
        if let Some(a) = &options.start_after {
            params.push(a);
            sql += &format!(", start_after => ${}", params.len());
        }
        if let Some(t) = &options.start_at {
            params.push(t);
            sql += &format!(", start_at => ${}", params.len());
        }
        if let Some(m) = &options.max_attempts {
            params.push(m);
            sql += &format!(", max_attempts => ${}", params.len());
        }
        sql += ")";
        if let Err(e) = client.execute(&sql, &params).await {
            if e.code() != Some(&SqlState::DUPLICATE_OBJECT) {
                return Err(e); // else it exists: its position and options stay
            }
        }
        let shared = Arc::new(Shared {
            stopping: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            state: AtomicU8::new(IDLE),
            lag_bits: AtomicU64::new(f64::NAN.to_bits()),
            cancel: client.cancel_token(),
        });
        Ok(Consumer {
            client,
            name: name.into(),
            row_type,
            options,
            shared,
            counts: Counts::default(),
        })
    }

    /// A handle to stop this consumer and read its lag from another task.
    pub fn handle(&self) -> StopHandle {
        StopHandle(self.shared.clone())
    }

    /// What this consumer did so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The connection back, once done.
    pub fn into_client(self) -> Client {
        self.client
    }

    /// Waits and handles batches until [`StopHandle::stop`]. Errors are the database's (a lost
    /// connection); a handler's errors are handled (retries, dead letters).
    pub async fn run<H: Handler>(&mut self, handler: &mut H) -> Result<(), tokio_postgres::Error> {
        let mut full = true;
        while !self.shared.stopping.load(Ordering::SeqCst) {
            if !full && !self.wait_step().await? {
                continue;
            }
            if self.shared.stopping.load(Ordering::SeqCst) {
                break;
            }
            full = self.run_once(handler).await? >= self.options.batch_size as usize;
        }
        // run may be called again
        self.shared.stopping.store(false, Ordering::SeqCst);
        self.shared.cancelled.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// True as soon as the consumer has rows to take, false after `timeout`.
    pub async fn wait(&self, timeout: Duration) -> Result<bool, tokio_postgres::Error> {
        let row = self
            .client
            .query_one(
                "SELECT pg_catalog.hlculid_consumer_wait($1, $2::float8 * interval '1 second')",
                &[&self.name, &timeout.as_secs_f64()],
            )
            .await?;
        Ok(row.get(0))
    }

    async fn wait_step(&mut self) -> Result<bool, tokio_postgres::Error> {
        self.shared.state.store(WAITING, Ordering::SeqCst);
        // stop() between the loop's check and the state's store: its cancel was not sent
        if self.shared.stopping.load(Ordering::SeqCst) {
            self.shared.state.store(BUSY, Ordering::SeqCst);
            return Ok(false);
        }
        let got = self.wait(self.options.wait_timeout).await;
        self.shared.state.store(BUSY, Ordering::SeqCst);
        let got = match got {
            Ok(g) => g,
            Err(e)
                if e.code() == Some(&SqlState::QUERY_CANCELED)
                    && self.shared.cancelled.load(Ordering::SeqCst) =>
            {
                false
            }
            Err(e) => return Err(e),
        };
        if !got {
            self.set_lag(0.0); // nothing was readable
        }
        Ok(got)
    }

    /// One batch without waiting: how many rows it took (0 when none was readable).
    pub async fn run_once<H: Handler>(
        &mut self,
        handler: &mut H,
    ) -> Result<usize, tokio_postgres::Error> {
        let tx = self.client.transaction().await?;
        let sql = format!(
            "SELECT * FROM pg_catalog.hlculid_consume($1, NULL::{}, $2)",
            self.row_type
        );
        let rows = tx
            .query(&sql, &[&self.name, &self.options.batch_size])
            .await?;
        let n = rows.len();
        if n == 0 || handler.handle(&tx, &rows).await.is_ok() {
            tx.commit().await?;
            self.counts.consumed += n as u64;
            self.note_lag(&rows);
            return Ok(n);
        }
        tx.rollback().await?;
        let rows = self.one_by_one(handler).await?;
        self.note_lag(&rows);
        Ok(rows.len())
    }

    async fn one_by_one<H: Handler>(
        &mut self,
        handler: &mut H,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let name = self.name.clone();
        let delay = self.options.retry_delay.as_secs_f64();
        let mut tx = self.client.transaction().await?;
        let sql = format!(
            "SELECT * FROM pg_catalog.hlculid_consume($1, NULL::{}, $2)",
            self.row_type
        );
        let rows = tx.query(&sql, &[&name, &self.options.batch_size]).await?;
        let (mut retried, mut dead) = (0, 0);
        for row in &rows {
            let sp = tx.savepoint("hlculid_row").await?;
            match handler.handle(&sp, std::slice::from_ref(row)).await {
                Ok(()) => sp.commit().await?,
                Err(e) => {
                    sp.rollback().await?;
                    let id: Id = row.get(self.options.id_column.as_str());
                    let scheduled: bool = tx
                        .query_one(
                            "SELECT pg_catalog.hlculid_consume_retry($1, $2, $3::float8 * interval '1 second', $4)",
                            &[&name, &id, &delay, &e.to_string()],
                        )
                        .await?
                        .get(0);
                    if scheduled {
                        retried += 1
                    } else {
                        dead += 1
                    }
                }
            }
        }
        tx.commit().await?;
        self.counts.consumed += (rows.len() - retried - dead) as u64;
        self.counts.retried += retried as u64;
        self.counts.dead_lettered += dead as u64;
        Ok(rows)
    }

    fn note_lag(&self, rows: &[Row]) {
        let lag = if rows.len() < self.options.batch_size as usize {
            0.0
        } else {
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            match rows
                .last()
                .map(|r| r.try_get::<_, Id>(self.options.id_column.as_str()))
            {
                Some(Ok(id)) => now.saturating_sub(id.ms()) as f64 / 1000.0,
                _ => f64::NAN,
            }
        };
        self.set_lag(lag);
    }

    fn set_lag(&self, lag: f64) {
        self.shared.lag_bits.store(lag.to_bits(), Ordering::Relaxed);
    }
}
