use super::*;
use crate::layout::Id;
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

const MS: u64 = 1 << 16;

/// A clock with plenty of reservation, as after the background writer has run.
fn open_clock(start: u64) -> SharedClock {
    let c = SharedClock::resume(start);
    c.set_reserved(EXHAUSTED - 1);
    c
}

/// The send rule on plain values, the model the atomic implementation is checked against.
fn send(l: u64, now_ms: u64) -> Option<u64> {
    Some(l.checked_add(1)?.max(now_ms.saturating_mul(1 << 16)))
}

fn tick(c: &SharedClock, now: u64) -> u64 {
    c.tick(now).unwrap().logical
}

#[test]
fn clock_ahead_takes_wall_time_with_counter_zero() {
    let c = open_clock(0);
    assert_eq!(tick(&c, 1000), 1000 * MS);
    assert_eq!(tick(&c, 1001), 1001 * MS);
}

#[test]
fn tick_reading_reads_the_clock_once_and_ticks() {
    let c = open_clock(0);
    let reads = std::cell::Cell::new(0);
    let (now, t) = c.tick_reading(|| {
        reads.set(reads.get() + 1);
        1234
    });
    assert_eq!((now, reads.get()), (1234, 1));
    assert_eq!(t.unwrap().logical, 1234 * MS);
}

#[test]
fn same_ms_counts_up() {
    let c = open_clock(0);
    assert_eq!(tick(&c, 1000), 1000 * MS);
    assert_eq!(tick(&c, 1000), 1000 * MS + 1);
    assert_eq!(tick(&c, 1000), 1000 * MS + 2);
}

#[test]
fn clock_behind_keeps_last_ms_and_counts_up() {
    let c = open_clock(0);
    tick(&c, 5000);
    let t = c.tick(4000).unwrap(); // stepped back 1 s
    assert_eq!(t.logical, 5000 * MS + 1);
    assert_eq!(t.backward_step_ms, Some(1000));
    // The same step is reported once, not at every id while the clock is behind.
    let t = c.tick(4001).unwrap();
    assert_eq!(t.logical, 5000 * MS + 2);
    assert_eq!(t.backward_step_ms, None);
    assert_eq!(c.stats().backward_jumps, 1);
    // Once the wall clock passes the logical clock, ids follow it again.
    assert_eq!(tick(&c, 5001), 5001 * MS);
}

#[test]
fn a_reading_recorded_after_ours_is_no_backward_step() {
    // This process read 10_001 and was preempted; another recorded 10_050 meanwhile (here:
    // inside our clock read). Our reading is stale, not a step of the clock.
    let c = open_clock(0);
    c.tick(10_000).unwrap();
    let (now, t) = c.tick_reading(|| {
        c.tick(10_050).unwrap();
        10_001
    });
    assert_eq!(now, 10_001);
    assert_eq!(t.unwrap().backward_step_ms, None);
    assert_eq!(c.stats().backward_jumps, 0);
    assert_eq!(c.stats().last_wall_ms, 10_050);
    // a reading far below one recorded before ours was read is a real step, reported once
    let (_, t) = c.tick_reading(|| 9_000);
    assert_eq!(t.unwrap().backward_step_ms, Some(1_050));
    let (_, t) = c.tick_reading(|| 8_990);
    assert_eq!(t.unwrap().backward_step_ms, None);
    assert_eq!(c.stats().backward_jumps, 1);
    assert_eq!(c.stats().last_wall_ms, 9_000);
}

#[test]
fn a_reading_taken_before_a_step_and_reported_after_it_reports_no_second_step() {
    // This process reads 10_001 just before the wall clock steps back 5 s; another process sees
    // the step and reports it while our reading is still in flight.
    let c = open_clock(0);
    c.tick(10_000).unwrap();
    let (_, t) = c.tick_reading(|| {
        assert_eq!(c.tick(5_000).unwrap().backward_step_ms, Some(5_000));
        10_001
    });
    assert_eq!(t.unwrap().backward_step_ms, None);
    // our stale reading did not raise the mark back, so the next reading is no new step
    assert_eq!(c.tick(5_010).unwrap().backward_step_ms, None);
    assert_eq!(c.stats().backward_jumps, 1);
    assert_eq!(c.stats().last_wall_ms, 5_010);
    // and a later real step is reported again
    assert_eq!(c.tick(1_000).unwrap().backward_step_ms, Some(4_010));
    assert_eq!(c.stats().backward_jumps, 2);
}

#[test]
fn small_backward_noise_is_not_a_step() {
    let c = open_clock(0);
    tick(&c, 5000);
    let t = c.tick(5000 - BACKWARD_STEP_THRESHOLD_MS).unwrap();
    assert_eq!(t.backward_step_ms, None);
    assert_eq!(c.stats().backward_jumps, 0);
    let t = c.tick(5000 - BACKWARD_STEP_THRESHOLD_MS - 1).unwrap();
    assert_eq!(t.backward_step_ms, Some(BACKWARD_STEP_THRESHOLD_MS + 1));
}

#[test]
fn two_separate_steps_are_two_reports() {
    let c = open_clock(0);
    tick(&c, 10_000);
    assert_eq!(c.tick(9_000).unwrap().backward_step_ms, Some(1000));
    assert_eq!(c.tick(8_000).unwrap().backward_step_ms, Some(1000));
    assert_eq!(c.stats().backward_jumps, 2);
}

#[test]
fn counter_overflow_carries_into_the_ms() {
    let c = open_clock(1000 * MS + 0xFFFE);
    let t = c.tick(1000).unwrap();
    assert_eq!(t.logical, 1000 * MS + 0xFFFF);
    assert_eq!(c.stats().overflows, 0);
    let t = c.tick(1000).unwrap();
    assert_eq!(t.logical, 1001 * MS);
    assert_eq!(c.stats().overflows, 1);
    // Still frozen at 1000: the logical clock runs ahead, never repeats.
    assert_eq!(tick(&c, 1000), 1001 * MS + 1);
    // A wall clock that reaches 1001 does not move it back.
    assert_eq!(tick(&c, 1001), 1001 * MS + 2);
}

#[test]
fn a_wall_tick_to_the_next_ms_is_not_an_overflow() {
    let c = open_clock(1000 * MS + 0xFFFF);
    let t = c.tick(1001).unwrap();
    assert_eq!(t.logical, 1001 * MS);
    assert_eq!(c.stats().overflows, 0);
}

#[test]
fn frozen_clock_issues_more_than_65536_distinct_increasing_ids() {
    let c = open_clock(0);
    let mut prev = 0;
    for i in 0..200_000u64 {
        let l = tick(&c, 7000);
        assert!(l > prev || i == 0);
        prev = l;
    }
    assert_eq!(prev, 7000 * MS + 199_999);
    assert_eq!(c.stats().overflows, 3);
}

#[test]
fn exhausted_clock_errors_instead_of_wrapping() {
    let c = SharedClock::resume(u64::MAX);
    assert_eq!(c.tick(1), Err(ClockError::Exhausted));
    assert_eq!(c.stats().logical, u64::MAX);
    let c = SharedClock::resume(u64::MAX - 10);
    assert_eq!(c.reservation_for(u64::MAX - 5, 1, 1000), EXHAUSTED);
    c.set_reserved(c.reservation_for(u64::MAX - 5, 1, 1000));
    assert_eq!(c.tick(1), Err(ClockError::Exhausted));
}

#[test]
fn the_shared_fields_do_not_share_the_hot_cache_line() {
    let c = SharedClock::resume(0);
    let hot = &c.logical as *const _ as usize;
    let cold = &c.reserved as *const _ as usize;
    assert!(cold - hot >= 64 + 56);
    assert!(hot - (&c as *const _ as usize) >= 64);
}

/// Checks the atomic implementation against the plain rule `L := max(L + 1, now << 16)` on a
/// single thread, for random clock readings including steps back and frozen stretches.
#[test]
fn tick_follows_the_send_rule() {
    let c = open_clock(0);
    let mut model = 0u64;
    let mut now = 1_000u64;
    let mut x = 12345u64;
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        match x % 10 {
            0 => now = now.saturating_sub(x % 50).max(1),
            1..=3 => now += x % 3,
            _ => {}
        }
        model = send(model, now).unwrap();
        assert_eq!(tick(&c, now), model);
    }
}

#[test]
fn observe_ahead_moves_the_clock() {
    let c = open_clock(0);
    tick(&c, 1000);
    let remote = 1300 * MS + 7;
    c.observe(remote, 1000, 500).unwrap();
    assert_eq!(tick(&c, 1000), remote + 1);
    assert_eq!(c.stats().observes, 1);
}

#[test]
fn observe_equal_ms_takes_the_larger_counter() {
    let c = open_clock(0);
    tick(&c, 1000);
    tick(&c, 1000); // L = 1000:1
    c.observe(1000 * MS + 5, 1000, 500).unwrap();
    assert_eq!(tick(&c, 1000), 1000 * MS + 6);
    c.observe(1000 * MS + 2, 1000, 500).unwrap();
    assert_eq!(tick(&c, 1000), 1000 * MS + 7);
}

#[test]
fn observe_behind_changes_nothing() {
    let c = open_clock(0);
    tick(&c, 2000);
    c.observe(1500 * MS, 2000, 500).unwrap();
    assert_eq!(tick(&c, 2000), 2000 * MS + 1);
}

#[test]
fn observe_too_far_ahead_is_refused_and_leaves_the_clock() {
    let c = open_clock(0);
    tick(&c, 1000);
    let before = c.stats();
    assert_eq!(
        c.observe(1501 * MS, 1000, 500),
        Err(ClockError::TooFarAhead { ahead_ms: 501 })
    );
    assert_eq!(
        c.observe((1000 + 3_600_000) * MS, 1000, 500),
        Err(ClockError::TooFarAhead {
            ahead_ms: 3_600_000
        })
    );
    assert_eq!(c.stats(), before);
    // Exactly at the bound is accepted.
    c.observe(1500 * MS, 1000, 500).unwrap();
}

#[test]
fn never_issues_beyond_the_reservation() {
    let c = SharedClock::resume(0);
    assert_eq!(
        c.tick(1000),
        Err(ClockError::NeedsReservation { needed: 1000 * MS })
    );
    let h = c.reservation_for(1000 * MS, 1000, 2000);
    assert_eq!(h, 3000 * MS);
    c.set_reserved(h);
    // The refused value 1000:0 was not taken: it is the next one returned.
    assert_eq!(tick(&c, 1000), 1000 * MS);
    assert_eq!(tick(&c, 2999), 2999 * MS);
    assert_eq!(tick(&c, 3000), 3000 * MS);
    assert_eq!(
        c.tick(3001),
        Err(ClockError::NeedsReservation { needed: 3001 * MS })
    );
    // Nothing moved while it was refused; once reserved, it is returned.
    assert_eq!(c.stats().logical, 3000 * MS);
    c.set_reserved(c.reservation_for(3001 * MS, 3001, 2000));
    assert_eq!(tick(&c, 3001), 3001 * MS);
    // An observe past the reservation asks for one too, and changes nothing yet.
    let before = c.stats();
    assert_eq!(
        c.observe(5002 * MS, 5000, 500),
        Err(ClockError::NeedsReservation { needed: 5002 * MS })
    );
    assert_eq!(c.stats(), before);
    c.set_reserved(1); // never moves down
    assert_eq!(c.stats().reserved, before.reserved);
}

#[test]
fn refresh_keeps_half_a_window_ahead() {
    let c = SharedClock::resume(0);
    let needed = c.refresh_due(1000, 2000).unwrap();
    assert_eq!(needed, 2000 * MS);
    c.set_reserved(c.reservation_for(needed, 1000, 2000));
    assert_eq!(c.stats().reserved, 4000 * MS);
    assert_eq!(c.refresh_due(1000, 2000), None);
    assert_eq!(c.refresh_due(3000, 2000), None);
    assert_eq!(c.refresh_due(3001, 2000), Some(4001 * MS));
    // Logical time ahead of the wall clock (an observe) counts as the base.
    let c2 = SharedClock::resume(5000 * MS);
    c2.set_reserved(5000 * MS);
    assert_eq!(c2.refresh_due(1000, 2000), Some(6000 * MS));
}

#[test]
fn restart_resumes_above_the_persisted_mark_even_with_the_clock_behind() {
    let c = SharedClock::resume(0);
    c.set_reserved(c.reservation_for(0, 10_000, 2000));
    let mut last = 0;
    for now in 10_000..10_050 {
        last = tick(&c, now);
    }
    let persisted = c.stats().reserved;
    assert!(persisted >= last);
    // Restart with the wall clock 5 s behind.
    let r = SharedClock::resume(persisted);
    let first = match r.tick(5_000) {
        Err(ClockError::NeedsReservation { needed }) => {
            r.set_reserved(r.reservation_for(needed, 5_000, 2000));
            tick(&r, 5_000)
        }
        other => panic!("expected a reservation request, got {other:?}"),
    };
    assert!(first > last);
    assert!(first > persisted && first <= persisted + 2);
}

#[test]
fn concurrent_ticks_are_unique_and_increasing_per_thread() {
    let c = Arc::new(open_clock(0));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let mut out = Vec::with_capacity(50_000);
                for i in 0..50_000u64 {
                    // Every thread sees its own slightly different (and sometimes stepped) clock.
                    let now = 1_000 + i / 100 + if t == 1 && i % 7000 == 0 { 0 } else { t };
                    out.push(c.tick(now).unwrap().logical);
                }
                out
            })
        })
        .collect();
    let mut all = HashSet::new();
    for h in threads {
        let v = h.join().unwrap();
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        for l in v {
            assert!(all.insert(l), "duplicate {l}");
        }
    }
    assert_eq!(all.len(), 200_000);
}

#[test]
fn concurrent_ticks_respect_the_reservation() {
    let c = Arc::new(SharedClock::resume(0));
    c.set_reserved(1000 * MS + 10_000);
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let mut n = 0;
                while let Ok(t) = c.tick(1000) {
                    assert!(t.logical <= 1000 * MS + 10_000);
                    n += 1;
                }
                n
            })
        })
        .collect();
    let total: u64 = threads.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(total, 10_001);
}

#[test]
fn backfill_orders_ids_of_one_ms_and_restarts_per_ms() {
    let mut b = Backfill::default();
    assert_eq!(b.next(5), Some(5 * MS));
    assert_eq!(b.next(5), Some(5 * MS + 1));
    assert_eq!(b.next(9), Some(9 * MS));
    assert_eq!(b.next(5), Some(5 * MS));
    let mut b = Backfill::default();
    let mut prev = 0;
    for i in 0..70_000 {
        let l = b.next(5).unwrap();
        assert!(i == 0 || l > prev);
        prev = l;
    }
    assert_eq!(prev, 6 * MS + (70_000 - 65_536 - 1));
    let mut b = Backfill::default();
    assert!(b.next(crate::layout::MAX_MS).is_some());
    assert_eq!(b.next(crate::layout::MAX_MS + 1), None);
}

/// A model of many publishers exchanging messages. Each has its own skewed wall clock; a
/// receive calls observe before the receiver makes its next event. Checks: ids never repeat,
/// each publisher's ids increase, and every effect sorts after its cause.
#[derive(Debug, Clone)]
enum Step {
    Local {
        node: usize,
        advance: u64,
    },
    Send {
        from: usize,
        to: usize,
        advance: u64,
    },
    Back {
        node: usize,
        by: u64,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        5 => (0usize..4, 0u64..3).prop_map(|(node, advance)| Step::Local { node, advance }),
        4 => (0usize..4, 0usize..4, 0u64..3).prop_map(|(from, to, advance)| Step::Send { from, to, advance }),
        1 => (0usize..4, 1u64..400).prop_map(|(node, by)| Step::Back { node, by }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn many_publishers_keep_uniqueness_order_and_causality(
        skews in proptest::collection::vec(0u64..300, 4),
        steps in proptest::collection::vec(step(), 1..400),
    ) {
        let clocks: Vec<SharedClock> = (0..4).map(|_| open_clock(0)).collect();
        let mut wall: Vec<u64> = skews.iter().map(|s| 1_000_000 + s).collect();
        let mut last: Vec<Option<Id>> = vec![None; 4];
        let mut seen = HashSet::new();
        let mut rand = 0u64;
        let mut emit = |node: usize, wall: &[u64], last: &mut [Option<Id>]| -> Id {
            rand += 1;
            let l = clocks[node].tick(wall[node]).unwrap().logical;
            let id = Id::from_logical(l, node as u16, rand);
            if let Some(prev) = last[node] {
                assert!(id > prev, "publisher {node} went backwards");
            }
            last[node] = Some(id);
            assert!(seen.insert(id), "duplicate id");
            id
        };
        for s in steps {
            match s {
                Step::Local { node, advance } => {
                    wall[node] += advance;
                    emit(node, &wall, &mut last);
                }
                Step::Send { from, to, advance } => {
                    wall[from] += advance;
                    wall[to] += advance;
                    let cause = emit(from, &wall, &mut last);
                    // The skew bound is tested on its own; here every observe is accepted.
                    clocks[to].observe(cause.logical(), wall[to], u64::MAX).unwrap();
                    let effect = emit(to, &wall, &mut last);
                    prop_assert!(effect > cause, "effect {effect:?} sorts before cause {cause:?}");
                }
                Step::Back { node, by } => wall[node] -= by,
            }
        }
    }
}

#[test]
fn a_wall_clock_outside_the_range_is_refused_and_changes_nothing() {
    let c = open_clock(0);
    tick(&c, 5_000);
    let before = c.stats();
    for now in [0, MAX_MS + 1, 1 << 60, u64::MAX] {
        assert_eq!(c.tick(now), Err(ClockError::WallClockOutOfRange));
        assert_eq!(
            c.observe(5_001 * MS, now, u64::MAX),
            Err(ClockError::WallClockOutOfRange)
        );
        assert_eq!(c.refresh_due(now, 1000), None);
        // a mark made while the clock reads nonsense covers the clock, not the reading
        assert_eq!(c.reservation_for(0, now, 1000), before.logical + 1000 * MS);
    }
    assert_eq!(c.stats(), before);
    // the last millisecond an id can hold is a reading like any other: its value is the end of
    // the clock, which needs a reservation like any value past the one in force
    assert_eq!(
        c.tick(MAX_MS),
        Err(ClockError::NeedsReservation { needed: EXHAUSTED })
    );
}

#[test]
fn refused_ticks_never_move_the_clock_however_often_they_are_retried() {
    // The disk never takes the mark: every tick is refused, and none may walk `logical` on.
    for start in [5_000 * MS, EXHAUSTED - 3] {
        let c = SharedClock::resume(start);
        for now in [1_000, 5_000, 5_001, 9_000] {
            for n in [1, 100, MAX_BATCH] {
                for _ in 0..1_000 {
                    let (_, t) = c.tick_n_reading(|| now, n);
                    assert!(
                        matches!(t, Err(ClockError::NeedsReservation { .. })),
                        "{t:?}"
                    );
                }
            }
        }
        assert_eq!(c.stats().logical, start);
    }
    // nor a floor or an observed id from the end of the range
    let c = SharedClock::resume(0);
    c.raise_floor(u64::MAX);
    assert_eq!(c.stats().logical, EXHAUSTED);
    assert_eq!(c.tick(1_000), Err(ClockError::Exhausted));
}

#[test]
fn the_wall_clock_at_the_end_of_the_range_cannot_lift_the_clock_past_exhausted() {
    let c = open_clock(0);
    let needed = EXHAUSTED;
    assert_eq!(c.tick(MAX_MS), Err(ClockError::NeedsReservation { needed }));
    let mark = c.reservation_for(needed, MAX_MS, 1000);
    assert_eq!(mark, EXHAUSTED);
    c.set_reserved(mark);
    for _ in 0..1000 {
        assert_eq!(c.tick(MAX_MS), Err(ClockError::Exhausted));
    }
    assert_eq!(c.stats().logical, 0);
}

#[test]
fn a_batch_is_n_consecutive_values_above_everything_before() {
    let c = open_clock(0);
    let a = tick(&c, 1000);
    let (_, t) = c.tick_n_reading(|| 1000, 100);
    let first = t.unwrap().logical;
    assert_eq!(first, a + 1);
    assert_eq!(tick(&c, 1000), first + 100);
    // behind the wall clock, a batch starts at the wall clock
    let (_, t) = c.tick_n_reading(|| 2000, 10);
    assert_eq!(t.unwrap().logical, 2000 * MS);
    assert_eq!(tick(&c, 2000), 2000 * MS + 10);
}

#[test]
fn a_batch_outside_1_to_max_is_refused_and_takes_nothing() {
    let c = open_clock(0);
    tick(&c, 1000);
    let before = c.stats();
    for n in [0, MAX_BATCH + 1, u64::MAX] {
        assert_eq!(c.tick_n_reading(|| 1000, n).1, Err(ClockError::BadBatch));
    }
    assert_eq!(c.stats(), before);
    assert!(c.tick_n_reading(|| 1000, MAX_BATCH).1.is_ok());
}

#[test]
fn a_batch_past_the_reservation_asks_for_its_last_value() {
    let c = SharedClock::resume(1000 * MS);
    c.set_reserved(1000 * MS + 50);
    let (_, t) = c.tick_n_reading(|| 1000, 100);
    assert_eq!(
        t,
        Err(ClockError::NeedsReservation {
            needed: 1000 * MS + 100
        })
    );
    c.set_reserved(c.reservation_for(1000 * MS + 100, 1000, 1000));
    let (_, t) = c.tick_n_reading(|| 1000, 100);
    // the refused batch took nothing: the same values are returned now
    assert_eq!(t.unwrap().logical, 1000 * MS + 1);
}

#[test]
fn a_batch_carrying_into_a_millisecond_ahead_counts_one_overflow() {
    let c = open_clock(1000 * MS + 0xFFF0);
    let (_, t) = c.tick_n_reading(|| 1000, 100);
    assert_eq!(t.unwrap().logical, 1000 * MS + 0xFFF1);
    assert_eq!(c.stats().overflows, 1);
}

#[test]
fn concurrent_batches_and_ticks_never_overlap() {
    let c = Arc::new(open_clock(0));
    let handles: Vec<_> = (0..4)
        .map(|k| {
            let c = c.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                for i in 0..2000u64 {
                    let n = if k % 2 == 0 { 1 + (i % 37) } else { 1 };
                    let (_, t) = c.tick_n_reading(|| 5_000 + i / 100, n);
                    let first = t.unwrap().logical;
                    got.extend(first..first + n);
                }
                got
            })
        })
        .collect();
    let all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(distinct.len(), all.len());
}

/// A clock with plenty of reservation and the given run-ahead bound.
fn bounded_clock(start: u64, max_run_ahead_ms: u64) -> SharedClock {
    let c = open_clock(start);
    c.set_max_run_ahead(max_run_ahead_ms);
    c
}

/// Takes batches at a frozen wall clock until the bound refuses one; returns the last value
/// returned and the refusal.
fn run_to_bound(c: &SharedClock, now: u64) -> (u64, ClockError) {
    let mut last = 0;
    for _ in 0..1_000_000 {
        match c.tick_n_reading(|| now, MAX_BATCH).1 {
            Ok(t) => last = t.logical + MAX_BATCH - 1,
            Err(e) => return (last, e),
        }
    }
    panic!("no bound");
}

#[test]
fn generation_at_a_frozen_wall_clock_stops_at_the_bound_and_takes_nothing() {
    let c = bounded_clock(0, 500);
    let (last, e) = run_to_bound(&c, 1_000);
    // every value of ms 1000 to 1500 was issued, none after
    assert_eq!(last, 1_501 * MS - 1);
    assert_eq!(e, ClockError::AtBound { wait_ms: 1 });
    let before = c.stats();
    assert_eq!(before.logical, last);
    for n in [1, 2, MAX_BATCH] {
        assert!(matches!(
            c.tick_n_reading(|| 1_000, n).1,
            Err(ClockError::AtBound { .. })
        ));
    }
    assert_eq!(c.stats(), before, "a refused tick moved the clock");
    // the bound moves with the wall clock
    assert_eq!(tick(&c, 1_001), last + 1);
    // a batch reaching further asks to wait until the bound covers its last value
    let c = bounded_clock(0, 500);
    run_to_bound(&c, 1_000);
    assert_eq!(
        c.tick_n_reading(|| 990, 1).1,
        Err(ClockError::AtBound { wait_ms: 11 })
    );
}

#[test]
fn a_bound_of_zero_still_issues_the_current_millisecond() {
    let c = bounded_clock(0, 0);
    let (last, e) = run_to_bound(&c, 7_000);
    assert_eq!(last, 7_001 * MS - 1);
    assert_eq!(e, ClockError::AtBound { wait_ms: 1 });
}

#[test]
fn a_backward_step_anchors_the_bound_where_the_clock_was() {
    let c = bounded_clock(0, 500);
    tick(&c, 10_000);
    // 5 s back: the clock keeps 10_000 and goes on without waiting, up to 10_500
    let t = c.tick(5_000).unwrap();
    assert_eq!(t.backward_step_ms, Some(5_000));
    for _ in 0..400 {
        c.tick_n_reading(|| 5_000, MAX_BATCH).1.unwrap();
    }
    let (last, e) = run_to_bound(&c, 5_000);
    assert_eq!(last >> 16, 10_500);
    assert_eq!(e, ClockError::AtBound { wait_ms: 5_001 });
}

#[test]
fn a_restart_ahead_of_the_wall_clock_goes_on_without_waiting() {
    // the mark was 1.5 s ahead when the server stopped, and the clock went back 3 s meanwhile
    let c = SharedClock::resume(11_500 * MS);
    c.set_reserved(EXHAUSTED - 1);
    c.set_max_run_ahead(500);
    assert_eq!(tick(&c, 8_500), 11_500 * MS + 1);
    let (last, _) = run_to_bound(&c, 8_500);
    assert_eq!(last >> 16, 12_000);
}

#[test]
fn an_observed_id_moves_the_bound() {
    let c = bounded_clock(0, 500);
    tick(&c, 1_000);
    c.observe(1_400 * MS, 1_000, 500).unwrap();
    let (last, _) = run_to_bound(&c, 1_000);
    assert_eq!(last >> 16, 1_900);
    // a recovery floor too
    c.raise_floor(5_000 * MS);
    let (last, _) = run_to_bound(&c, 1_000);
    assert_eq!(last >> 16, 5_500);
}

#[test]
fn observing_an_id_at_or_below_the_clock_always_succeeds() {
    // after a recovery the clock runs an hour ahead of the wall clock
    let c = open_clock(0);
    c.raise_floor((1_000 + 3_600_000) * MS);
    let own = tick(&c, 1_000);
    c.observe(own, 1_000, 500).unwrap();
    c.observe(own - 5, 1_000, 500).unwrap();
    // even with the wall clock out of range: it changes nothing
    c.observe(own, 0, 500).unwrap();
    assert_eq!(tick(&c, 1_000), own + 1);
    // one above the clock is judged as before
    assert_eq!(
        c.observe(own + 10, 1_000, 500),
        Err(ClockError::TooFarAhead {
            ahead_ms: 3_600_000
        })
    );
}

#[test]
fn concurrent_batches_at_a_frozen_clock_never_pass_the_bound() {
    let c = Arc::new(bounded_clock(0, 50));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let c = c.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                for _ in 0..200 {
                    match c.tick_n_reading(|| 1_000, MAX_BATCH / 4).1 {
                        Ok(t) => got.push(t.logical),
                        Err(ClockError::AtBound { .. }) => {}
                        Err(e) => panic!("{e:?}"),
                    }
                }
                got
            })
        })
        .collect();
    let firsts: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    // 51 ms of batches were issued, each once, and the clock stopped at the bound
    assert_eq!(firsts.len(), 51 * 4);
    assert_eq!(firsts.iter().collect::<HashSet<_>>().len(), firsts.len());
    assert_eq!(c.stats().logical, 1_051 * MS - 1);
}

#[test]
fn narrow_batches_skip_counters_they_cannot_hold_and_stay_ordered_with_full_ones() {
    const NARROW: u64 = 2048;
    let c = open_clock(0);
    assert_eq!(tick(&c, 1_000), 1_000 * MS);
    // a narrow batch right after: the same millisecond, next counter
    let (_, t) = c.tick_batch_reading(|| 1_000, 3, NARROW);
    assert_eq!(t.unwrap().logical, 1_000 * MS + 1);
    // full ticks take the counter past what a narrow id holds...
    for _ in 0..3_000 {
        tick(&c, 1_000);
    }
    // ...and the next narrow batch moves to the next millisecond
    let (_, t) = c.tick_batch_reading(|| 1_000, 1, NARROW);
    let first = t.unwrap().logical;
    assert_eq!(first, 1_001 * MS);
    // a batch longer than a millisecond's worth carries, skipping counters 2048 and up
    let (_, t) = c.tick_batch_reading(|| 1_000, 5_000, NARROW);
    let first = t.unwrap().logical;
    assert_eq!(first, 1_001 * MS + 1);
    let values: Vec<u64> = (0..5_000).map(|i| nth_value(first, i, NARROW)).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]));
    assert!(values.iter().all(|v| v & 0xFFFF < NARROW));
    assert_eq!(*values.last().unwrap(), 1_003 * MS + (1 + 4_999 - 2 * 2048));
    // the clock stands at the batch's last value: the next full tick is right after it
    assert_eq!(tick(&c, 1_000), values[4_999] + 1);
    // a width that is not a power of two, or wider than the counter, is refused
    for w in [0, 3, 1 << 17] {
        assert_eq!(
            c.tick_batch_reading(|| 1_000, 1, w).1,
            Err(ClockError::BadBatch)
        );
    }
}

#[test]
fn backfill_batch_is_the_send_rule_past_held_values() {
    const MS: u64 = 1 << 16;
    // same millisecond: the counter counts; a later one starts at counter 0
    assert_eq!(
        backfill_batch(&[5, 5, 7], |_| None),
        Some(vec![5 * MS, 5 * MS + 1, 7 * MS])
    );
    // held values of a millisecond are stepped over, other publishers' ranges untouched
    let held = |m: u64| (m == 5).then_some(5 * MS + 9);
    assert_eq!(
        backfill_batch(&[5, 5, 6], held),
        Some(vec![5 * MS + 10, 5 * MS + 11, 6 * MS])
    );
    // a full counter carries into the next millisecond, whose held value is stepped over too
    let held = |m: u64| match m {
        5 => Some(6 * MS - 1),
        6 => Some(6 * MS + 2),
        _ => None,
    };
    assert_eq!(
        backfill_batch(&[5, 6], held),
        Some(vec![6 * MS + 3, 6 * MS + 4])
    );
    // the end of the range
    assert_eq!(
        backfill_batch(&[crate::layout::MAX_MS], |_| None),
        Some(vec![crate::layout::MAX_MS * MS])
    );
    assert_eq!(
        backfill_batch(&[crate::layout::MAX_MS], |_| Some(u64::MAX)),
        None
    );
    assert_eq!(backfill_batch(&[crate::layout::MAX_MS + 1], |_| None), None);
}

proptest! {
    #[test]
    fn backfill_batch_increases_and_never_meets_a_held_value(
        mut ms in proptest::collection::vec(1_000u64..1_004, 1..300),
        held in proptest::collection::vec(0u64..70_000, 0..4),
    ) {
        ms.sort_unstable();
        let h = |m: u64| held.get((m - 1_000) as usize).map(|c| m * (1 << 16) + c.min(&65_535));
        let out = backfill_batch(&ms, h).unwrap();
        prop_assert_eq!(out.len(), ms.len());
        for (i, &v) in out.iter().enumerate() {
            prop_assert!(v >> 16 >= ms[i]);
            if i > 0 { prop_assert!(v > out[i - 1]); }
            if let Some(hv) = h(v >> 16) { prop_assert!(v > hv); }
        }
    }
}
