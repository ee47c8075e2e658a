//! The crate's consumer (feature `consumer`) against a real server: scripts/clients.sh runs these
//! with `--ignored` and HLCULID_TEST_DSN set. Writers commit out of order beside it (a naive
//! cursor loses rows in the same run; the consumer gets every committed row once, in id order); a
//! handler failing on chosen rows retries them, parks them as dead letters and goes on; stop()
//! ends an idle wait at once and lets a batch in hand commit; the lag is a number.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hlculid_core::consumer::{BoxError, Consumer, ConsumerOptions, Handler};
use hlculid_core::Id;
use tokio_postgres::{Client, Row, Transaction};
mod common;

use common::connect;

async fn fresh(client: &Client, table: &str) {
    client
        .batch_execute(&format!(
            "DROP TABLE IF EXISTS {table}, {table}_done;
             CREATE TABLE {table} (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int);
             CREATE TABLE {table}_done (id hlculid);"
        ))
        .await
        .unwrap();
}

async fn count(client: &Client, sql: &str) -> i64 {
    client.query_one(sql, &[]).await.unwrap().get(0)
}

/// Handles rows by recording them in TABLE_done, in the batch's transaction; fails on `failing`.
struct Record {
    done: String,
    order: Arc<Mutex<Vec<Id>>>,
    failing: HashSet<Id>,
    pause: Duration,
    started: Arc<tokio::sync::Notify>,
}

impl Record {
    fn new(table: &str) -> Self {
        Record {
            done: format!("{table}_done"),
            order: Arc::default(),
            failing: HashSet::new(),
            pause: Duration::ZERO,
            started: Arc::default(),
        }
    }
}

impl Handler for Record {
    async fn handle(&mut self, tx: &Transaction<'_>, rows: &[Row]) -> Result<(), BoxError> {
        self.started.notify_one();
        tokio::time::sleep(self.pause).await;
        let ids: Vec<Id> = rows.iter().map(|r| r.get("id")).collect();
        if let Some(bad) = ids.iter().find(|i| self.failing.contains(i)) {
            return Err(format!("cannot handle {bad}").into());
        }
        self.order.lock().unwrap().extend(&ids);
        tx.execute(
            &format!("INSERT INTO {} SELECT unnest($1::hlculid[])", self.done),
            &[&ids],
        )
        .await?;
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a server: scripts/clients.sh"]
async fn consumer_gets_every_row_once_in_id_order_under_late_commits() {
    let db = connect().await;
    fresh(&db, "rc_ev").await;
    let mut consumer = Consumer::with_options(
        connect().await,
        "rc_ev",
        "rc_main",
        ConsumerOptions {
            wait_timeout: Duration::from_secs(5),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let stop = consumer.handle();
    let mut handler = Record::new("rc_ev");
    let order = handler.order.clone();
    let running = tokio::spawn(async move { consumer.run(&mut handler).await.map(|_| consumer) });
    // a naive cursor beside it: WHERE id > $last ORDER BY id
    let naive = Arc::new(Mutex::new(HashSet::<Id>::new()));
    let naive_stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let naive_task = {
        let (naive, naive_stop) = (naive.clone(), naive_stop.clone());
        tokio::spawn(async move {
            let c = connect().await;
            let mut last: Id = "000000000000-0000-0000-000000000000".parse().unwrap();
            while !naive_stop.load(std::sync::atomic::Ordering::SeqCst) {
                let rows = c
                    .query(
                        "SELECT id FROM rc_ev WHERE id > $1 ORDER BY id LIMIT 1000",
                        &[&last],
                    )
                    .await
                    .unwrap();
                for r in &rows {
                    last = r.get(0);
                    naive.lock().unwrap().insert(last);
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    // 6 writers: a third commit 0-40 ms late, 5 % roll back
    let end = Instant::now() + Duration::from_secs(2);
    let writers: Vec<_> = (0..6)
        .map(|w: i32| {
            tokio::spawn(async move {
                let mut c = connect().await;
                let mut committed = Vec::new();
                let mut k = 0u32;
                while Instant::now() < end {
                    k += 1;
                    let tx = c.transaction().await.unwrap();
                    let id: Id = tx
                        .query_one("INSERT INTO rc_ev (n) VALUES ($1) RETURNING id", &[&w])
                        .await
                        .unwrap()
                        .get(0);
                    let r = (k.wrapping_mul(2654435761) ^ (w as u32).wrapping_mul(40503)) % 300;
                    if r < 100 {
                        tokio::time::sleep(Duration::from_millis((r * 40 / 100) as u64)).await;
                    }
                    if r % 20 == 7 {
                        tx.rollback().await.unwrap();
                    } else {
                        tx.commit().await.unwrap();
                        committed.push(id);
                    }
                }
                committed
            })
        })
        .collect();
    let mut committed = HashSet::new();
    for w in writers {
        committed.extend(w.await.unwrap());
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while count(&db, "SELECT count(*) FROM rc_ev_done").await < committed.len() as i64 {
        assert!(Instant::now() < deadline, "the consumer did not catch up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await; // a duplicate would show now
    naive_stop.store(true, std::sync::atomic::Ordering::SeqCst);
    naive_task.await.unwrap();
    stop.stop().await;
    let consumer = running.await.unwrap().unwrap();
    let handled: Vec<Id> = db
        .query("SELECT id FROM rc_ev_done", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(committed.len() > 100, "only {} rows", committed.len());
    assert_eq!(
        handled.len(),
        handled.iter().collect::<HashSet<_>>().len(),
        "a row was handled twice"
    );
    assert_eq!(handled.into_iter().collect::<HashSet<_>>(), committed);
    let order = order.lock().unwrap().clone();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "rows came out of id order"
    );
    assert_eq!(consumer.counts().consumed, committed.len() as u64);
    let lost = committed.difference(&naive.lock().unwrap()).count();
    assert!(
        lost > 0,
        "the naive cursor lost nothing: the writers did not commit out of order"
    );
    assert!(stop.lag().is_some_and(|l| l >= 0.0));
    println!(
        "{} rows: the consumer got all; the naive cursor lost {lost}",
        committed.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a server: scripts/clients.sh"]
async fn consumer_retries_failing_rows_then_parks_them_without_stopping() {
    let db = connect().await;
    fresh(&db, "rr_ev").await;
    let ids: Vec<Id> = db
        .query(
            "INSERT INTO rr_ev (n) SELECT g FROM generate_series(1, 60) g RETURNING id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let failing: HashSet<Id> = [ids[6], ids[22], ids[40]].into();
    let options = ConsumerOptions {
        batch_size: 25,
        max_attempts: Some(2),
        retry_delay: Duration::ZERO,
        wait_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let mut consumer = Consumer::with_options(connect().await, "rr_ev", "rr_main", options)
        .await
        .unwrap();
    let stop = consumer.handle();
    let mut handler = Record::new("rr_ev");
    handler.failing = failing.clone();
    let running = tokio::spawn(async move { consumer.run(&mut handler).await.map(|_| consumer) });
    let deadline = Instant::now() + Duration::from_secs(20);
    while count(
        &db,
        "SELECT count(*) FROM hlculid.hlculid_dead_letters WHERE consumer = 'rr_main'",
    )
    .await
        < 3
    {
        assert!(
            Instant::now() < deadline,
            "the failing rows were not parked"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.stop().await;
    let consumer = running.await.unwrap().unwrap();
    let handled: HashSet<Id> = db
        .query("SELECT id FROM rr_ev_done", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        count(&db, "SELECT count(*) FROM rr_ev_done").await,
        57,
        "a row was handled twice"
    );
    assert_eq!(
        handled,
        ids.iter()
            .copied()
            .filter(|i| !failing.contains(i))
            .collect()
    );
    let dead = db
        .query(
            "SELECT id, attempts, last_error FROM hlculid.hlculid_dead_letters WHERE consumer = 'rr_main'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        dead.iter()
            .map(|r| r.get::<_, Id>(0))
            .collect::<HashSet<_>>(),
        failing
    );
    for r in &dead {
        assert_eq!(r.get::<_, i32>(1), 2);
        assert!(r.get::<_, String>(2).contains("cannot handle"));
    }
    let counts = consumer.counts();
    assert_eq!(
        (counts.consumed, counts.retried, counts.dead_lettered),
        (57, 3, 3)
    );
    // requeued and fixed: handled once
    let n: i64 = db
        .query_one("SELECT hlculid_dead_letter_requeue('rr_main')", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 3);
    let mut again = Consumer::new(connect().await, "rr_ev", "rr_main")
        .await
        .unwrap();
    assert_eq!(again.run_once(&mut Record::new("rr_ev")).await.unwrap(), 3);
    assert_eq!(count(&db, "SELECT count(*) FROM rr_ev_done").await, 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a server: scripts/clients.sh"]
async fn consumer_stops_an_idle_wait_at_once_and_lets_a_batch_finish() {
    let db = connect().await;
    fresh(&db, "rs_ev").await;
    let options = ConsumerOptions {
        wait_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let mut idle = Consumer::with_options(connect().await, "rs_ev", "rs_idle", options.clone())
        .await
        .unwrap();
    let stop = idle.handle();
    let running = tokio::spawn(async move { idle.run(&mut Record::new("rs_ev")).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let t0 = Instant::now();
    stop.stop().await;
    running.await.unwrap().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "stop() waited {:?}",
        t0.elapsed()
    );
    // a stop during a batch: the batch commits, then run() returns
    let mut busy = Consumer::with_options(connect().await, "rs_ev", "rs_busy", options)
        .await
        .unwrap();
    let stop = busy.handle();
    let mut handler = Record::new("rs_ev");
    handler.pause = Duration::from_millis(500);
    let started = handler.started.clone();
    let running = tokio::spawn(async move { busy.run(&mut handler).await });
    db.execute(
        "INSERT INTO rs_ev (n) SELECT g FROM generate_series(1, 10) g",
        &[],
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .unwrap();
    stop.stop().await;
    running.await.unwrap().unwrap();
    assert_eq!(count(&db, "SELECT count(*) FROM rs_ev_done").await, 10);
    let moved: bool = db
        .query_one(
            "SELECT position = (SELECT max(id) FROM rs_ev) FROM hlculid.hlculid_consumers WHERE consumer = 'rs_busy'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(moved, "the stopped batch did not commit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a server: scripts/clients.sh"]
async fn consumer_lag_is_the_age_of_the_rows_it_is_behind_on() {
    let db = connect().await;
    fresh(&db, "rl_ev").await;
    db.execute(
        "INSERT INTO rl_ev (id, n) SELECT hlculid_generate_at(now() - interval '1 hour'), g FROM generate_series(1, 5) g",
        &[],
    )
    .await
    .unwrap();
    let options = ConsumerOptions {
        batch_size: 2,
        ..Default::default()
    };
    let mut c = Consumer::with_options(connect().await, "rl_ev", "rl_main", options)
        .await
        .unwrap();
    let h = c.handle();
    assert_eq!(h.lag(), None);
    let mut handler = Record::new("rl_ev");
    assert_eq!(c.run_once(&mut handler).await.unwrap(), 2);
    let lag = h.lag().unwrap();
    assert!(lag > 3590.0 && lag < 3610.0, "lag {lag}"); // a full batch of hour-old rows
    assert_eq!(c.run_once(&mut handler).await.unwrap(), 2);
    assert_eq!(c.run_once(&mut handler).await.unwrap(), 1);
    assert_eq!(h.lag(), Some(0.0)); // caught up
}
