//! Values of the server's clock for ids: the transaction holds the horizon (src/horizon/slots.rs)
//! before the clock ticks, so every id it makes stays below every horizon until it ends. The
//! generators' slow paths take their values here; the clock itself (src/clock/durable.rs) knows
//! nothing of transactions.

use crate::base::errors::{Condition, UserError};
use crate::clock::durable::{batch_detail, durable, finish, now_ms, pace, MarkError};
use crate::horizon::slots;
use hlculid_core::clock::{Tick, FULL_COUNTER};
use hlculid_core::mark::Refusal;

/// `n` values from the server's clock (the first is returned), waiting at the bound; raises
/// what the clock refuses.
pub fn take(n: u64) -> Tick {
    take_batch(n, FULL_COUNTER)
}

/// `n` values for ids whose counter holds `counter_values` values a millisecond (bigint ids).
pub fn take_batch(n: u64, counter_values: u64) -> Tick {
    finish(try_take_batch(n, counter_values))
}

/// The clock's answer for a batch, after the transaction holds the horizon.
fn try_take_batch(n: u64, counter_values: u64) -> Result<Tick, Refusal<MarkError>> {
    let clock = durable();
    slots::hold();
    clock.take_batch(n, counter_values, now_ms, pace)
}

/// The batch of `n` values a SQL function (`function`, for the message) asked for: the clock
/// itself enforces the one batch limit ([`MAX_BATCH`](hlculid_core::clock::MAX_BATCH)) and refuses anything outside it with
/// nothing taken, raised here as 22023 naming the function and the count.
pub fn take_batch_for(function: &str, n: i32, counter_values: u64) -> Tick {
    // a negative count is refused as the empty batch is
    match try_take_batch(u64::try_from(n).unwrap_or(0), counter_values) {
        Err(Refusal::BadBatch) => UserError::new(
            Condition::InvalidParameter,
            format!("{function} cannot make {n} ids"),
        )
        .detail(batch_detail())
        .hint("Call it again for more ids: every batch sorts after the one before.")
        .raise(),
        r => finish(r),
    }
}
