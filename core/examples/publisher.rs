//! A publisher process: stamps its events with ids that keep increasing across restarts, even
//! when the system clock stepped back meanwhile, and observes the ids of events it receives so
//! that its own later events sort after them.
//!
//! cargo run -p hlculid-core --example publisher -- /tmp/publisher-state

use hlculid_core::{Generator, Id};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".to_string());
    std::fs::create_dir_all(&dir)?;
    // Publisher 12, a durable high-water mark in `dir`, and the server's default skew bound.
    let ids = Generator::builder(12)
        .persist(&dir)
        .max_skew(Duration::from_millis(500))
        .build()?;

    let event = ids.generate()?;
    println!("stamped {event} (ULID {})", event.to_ulid());

    // An event received from another publisher: ours afterwards sort after it.
    let received: Id = ids.generate()?;
    ids.observe(received)?;
    let reply = ids.generate()?;
    assert!(reply > received);
    println!("replied {reply}: {:?}", reply.parts());
    Ok(())
}
