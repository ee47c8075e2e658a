//! The design's scenario, end to end: publishers stamp events, events travel out of order, the
//! datastore sorts them. Three commands:
//!
//! - `publish PUBLISHER COUNT OUT`: after a second (so a reader piped to it is up), COUNT cause
//!   events, one line each (`id cause seq -`), into OUT and, as they are made, to stdout.
//! - `react PUBLISHER IN OUT [--no-observe]`: for each event read from IN (`-`: stdin, as they
//!   arrive), observe it (the HLC receive rule), then stamp an effect of it
//!   (`id effect seq cause_id`). Run it with the clock behind.
//! - `consume DSN FILE...`: shuffle every event (as a queue would deliver them), load them with
//!   binary COPY, and check that `ORDER BY id` puts every effect after its cause and each
//!   publisher's events in the order it made them. Exits 1 if not.
//!
//! tests/clients/test_scenario.py runs it with the reacting publisher 300 ms behind (libfaketime).

use futures_util::pin_mut;
use hlculid_core::{Generator, Id};
use rand::seq::SliceRandom;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;
use tokio_postgres::NoTls;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

struct Event {
    id: Id,
    kind: String,
    seq: i32,
    cause: Option<Id>,
}

fn read(path: &str) -> Result<Vec<Event>> {
    let mut out = Vec::new();
    for line in BufReader::new(std::fs::File::open(path)?).lines() {
        let line = line?;
        let f: Vec<&str> = line.split(' ').collect();
        out.push(Event {
            id: f[0].parse()?,
            kind: f[1].to_string(),
            seq: f[2].parse()?,
            cause: if f[3] == "-" {
                None
            } else {
                Some(f[3].parse()?)
            },
        });
    }
    Ok(out)
}

fn write(path: &str, events: &[Event]) -> Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for e in events {
        writeln!(f, "{}", line(e))?;
    }
    Ok(())
}

fn line(e: &Event) -> String {
    let cause = e.cause.map_or("-".to_string(), |c| c.to_string());
    format!("{} {} {} {cause}", e.id, e.kind, e.seq)
}

fn publish(publisher: u16, count: i32, out: &str) -> Result<()> {
    let ids = Generator::new(publisher);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let mut events = Vec::new();
    let mut stdout = std::io::stdout().lock();
    for seq in 0..count {
        let e = Event {
            id: ids.generate()?,
            kind: "cause".into(),
            seq,
            cause: None,
        };
        writeln!(stdout, "{}", line(&e))?;
        stdout.flush()?;
        events.push(e);
        if seq % 50 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    write(out, &events)
}

fn react(publisher: u16, input: &str, out: &str, observe: bool) -> Result<()> {
    // the skew bound must allow the other publisher's clock to be ahead of ours
    let ids = Generator::builder(publisher)
        .max_skew(std::time::Duration::from_secs(2))
        .build()?;
    let reader: Box<dyn BufRead> = if input == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(std::fs::File::open(input)?))
    };
    let mut events = Vec::new();
    for (seq, l) in reader.lines().enumerate() {
        let cause: Id = l?.split(' ').next().ok_or("empty line")?.parse()?;
        if observe {
            ids.observe(cause)?;
        }
        events.push(Event {
            id: ids.generate()?,
            kind: "effect".into(),
            seq: seq as i32,
            cause: Some(cause),
        });
    }
    write(out, &events)
}

async fn consume(dsn: &str, files: &[String]) -> Result<bool> {
    let mut events = Vec::new();
    for f in files {
        events.extend(read(f)?);
    }
    events.shuffle(&mut <rand::rngs::StdRng as rand::SeedableRng>::from_os_rng());
    let (client, connection) = tokio_postgres::connect(dsn, NoTls).await?;
    tokio::spawn(connection);
    client
        .batch_execute(
            "CREATE EXTENSION IF NOT EXISTS hlculid;
             DROP TABLE IF EXISTS scenario_events;
             CREATE TABLE scenario_events (id hlculid PRIMARY KEY, kind text, seq int, cause hlculid)",
        )
        .await?;
    let ty = client.prepare("SELECT $1::hlculid").await?.params()[0].clone();
    let sink = client
        .copy_in("COPY scenario_events (id, kind, seq, cause) FROM STDIN BINARY")
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &[ty.clone(), Type::TEXT, Type::INT4, ty]);
    pin_mut!(writer);
    for e in &events {
        writer
            .as_mut()
            .write(&[&e.id, &e.kind, &e.seq, &e.cause])
            .await?;
    }
    writer.finish().await?;

    let rows = client
        .query(
            "SELECT id, hlculid_publisher(id), seq, cause FROM scenario_events ORDER BY id",
            &[],
        )
        .await?;
    let mut position = HashMap::new();
    let mut last_seq: HashMap<i32, i32> = HashMap::new();
    let (mut before_cause, mut out_of_order) = (0, 0);
    for (i, r) in rows.iter().enumerate() {
        let (id, publisher, seq, cause): (Id, i32, i32, Option<Id>) =
            (r.get(0), r.get(1), r.get(2), r.get(3));
        position.insert(id, i);
        if let Some(cause) = cause {
            if position.get(&cause).is_none_or(|&p| p > i) {
                before_cause += 1;
            }
        }
        if last_seq
            .insert(publisher, seq)
            .is_some_and(|prev| prev >= seq)
        {
            out_of_order += 1;
        }
    }
    println!("{} events loaded in shuffled order", rows.len());
    println!("effects sorted before their cause: {before_cause}");
    println!("events out of their publisher's order: {out_of_order}");
    for r in client
        .query(
            "SELECT (hlculid_decode(id)).*, kind, seq FROM scenario_events ORDER BY id LIMIT 3",
            &[],
        )
        .await?
    {
        let ts: std::time::SystemTime = r.get(0);
        let (counter, publisher, kind, seq): (i32, i32, String, i32) =
            (r.get(1), r.get(2), r.get(4), r.get(5));
        println!("{ts:?} counter {counter} publisher {publisher}: {kind} {seq}");
    }
    Ok(before_cause == 0 && out_of_order == 0 && rows.len() == events.len())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("publish") => publish(args[1].parse()?, args[2].parse()?, &args[3]),
        Some("react") => react(
            args[1].parse()?,
            &args[2],
            &args[3],
            args.get(4).map(String::as_str) != Some("--no-observe"),
        ),
        Some("consume") => {
            if !consume(&args[1], &args[2..]).await? {
                std::process::exit(1);
            }
            Ok(())
        }
        _ => Err("usage: scenario publish|react|consume ...".into()),
    }
}
