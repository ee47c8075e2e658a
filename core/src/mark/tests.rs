use super::*;
use crate::clock::{Stats, EXHAUSTED};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const MS: u64 = 1 << 16;

/// A mark store in memory that can be told to fail, counting its writes.
#[derive(Default)]
struct TestStore {
    failing: AtomicBool,
    durable: AtomicU64,
    writes: AtomicUsize,
    lock: Mutex<()>,
}

impl MarkStore for TestStore {
    type Error = &'static str;

    fn serialised<R>(&self, f: impl FnOnce() -> R) -> R {
        let _g = self.lock.lock().unwrap();
        f()
    }

    fn store(&self, mark: u64) -> Result<(), &'static str> {
        if self.failing.load(Ordering::SeqCst) {
            return Err("disk full");
        }
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.durable.fetch_max(mark, Ordering::SeqCst);
        Ok(())
    }
}

/// A wall clock that only moves when told to (or when a caller waits at the bound).
struct FakeTime(AtomicU64);

impl FakeTime {
    fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[test]
fn take_reserves_on_demand_and_every_value_is_below_the_durable_mark() {
    let clock = SharedClock::resume(0);
    let store = TestStore::default();
    let d = DurableClock::new(&clock, &store, 1_000);
    let t = d.take(1, || 5_000, |_| panic!("no wait")).unwrap();
    assert_eq!(t.logical, 5_000 * MS);
    assert_eq!(store.writes.load(Ordering::SeqCst), 1);
    assert!(store.durable.load(Ordering::SeqCst) >= 6_000 * MS);
    // within the window: no more writes
    for now in 5_000..5_900 {
        let t = d.take(3, || now, |_| panic!("no wait")).unwrap();
        assert!(t.logical + 2 <= store.durable.load(Ordering::SeqCst));
    }
    assert_eq!(store.writes.load(Ordering::SeqCst), 1);
}

#[test]
fn an_outage_of_the_mark_moves_the_clock_by_no_more_than_what_was_returned() {
    let clock = Arc::new(SharedClock::resume(0));
    let store = Arc::new(TestStore::default());
    let time = Arc::new(FakeTime(AtomicU64::new(10_000)));
    // a short window: the callers use up what is reserved during the outage
    DurableClock::new(&clock, &*store, 10)
        .take(1, || 10_000, |_| {})
        .unwrap();
    store.failing.store(true, Ordering::SeqCst);
    let before = clock.stats().logical;
    // two callers retry through the outage while the wall clock runs on for 10 s
    let returned = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (clock, store, time, returned) =
                (clock.clone(), store.clone(), time.clone(), returned.clone());
            std::thread::spawn(move || {
                let d = DurableClock::new(&clock, &*store, 1_000);
                for i in 0..20_000u64 {
                    if i % 2_000 == 1_999 {
                        time.0.fetch_add(1_000, Ordering::SeqCst);
                    }
                    match d.take(1 + i % 1_000, || time.now(), |_| {}) {
                        Ok(_) => {
                            returned.fetch_add(1 + i % 1_000, Ordering::SeqCst);
                        }
                        Err(Refusal::Store("disk full")) => {}
                        Err(e) => panic!("{e:?}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // The values still reserved before the outage were issued, and nothing else moved: the
    // clock is the last reserved value at most, however often the callers retried.
    let after = clock.stats();
    assert!(after.logical - before <= returned.load(Ordering::SeqCst) + 2 * 1_000);
    assert!(after.logical <= after.reserved);
    assert!(returned.load(Ordering::SeqCst) > 0);
    // the mark can be written again: generation resumes by itself, at the wall clock
    store.failing.store(false, Ordering::SeqCst);
    let t = DurableClock::new(&clock, &*store, 1_000)
        .take(1, || time.now(), |_| {})
        .unwrap();
    assert_eq!(t.logical, time.now() * MS);
}

#[test]
fn at_the_bound_take_waits_for_the_wall_clock_and_counts_one_wait_per_call() {
    let clock = SharedClock::resume(0);
    clock.set_max_run_ahead(20);
    let store = TestStore::default();
    let time = FakeTime(AtomicU64::new(50_000));
    let d = DurableClock::new(&clock, &store, 1_000);
    let mut waited_calls = 0;
    let mut last = 0;
    for _ in 0..200 {
        let waited = std::cell::Cell::new(false);
        let t = d
            .take(
                MAX_BATCH,
                || time.now(),
                |ms| {
                    waited.set(true);
                    assert!(ms >= 1);
                    time.0.fetch_add(ms, Ordering::SeqCst);
                },
            )
            .unwrap();
        waited_calls += usize::from(waited.get());
        assert!(t.logical > last);
        last = t.logical + MAX_BATCH - 1;
        // never more than the bound ahead of the wall clock as read when it was returned
        assert!(
            last >> 16 <= time.now() + 20,
            "{} {}",
            last >> 16,
            time.now()
        );
    }
    // 200 ms of values at one batch per ms: the first 21 without waiting, then one wait each
    assert_eq!(waited_calls, 200 - 21);
    assert_eq!(clock.stats().waits, waited_calls as u64);
}

#[test]
fn a_backward_step_under_load_never_waits() {
    let clock = SharedClock::resume(0);
    let store = TestStore::default();
    let d = DurableClock::new(&clock, &store, 1_000);
    let time = FakeTime(AtomicU64::new(100_000));
    for _ in 0..1_000 {
        d.take(100, || time.now(), |_| panic!("waited")).unwrap();
        time.0.fetch_add(1, Ordering::SeqCst);
    }
    time.0.fetch_sub(5_000, Ordering::SeqCst);
    // 5 s behind, 10 000 ids a (wall clock) ms: far below the bound's 500 ms of counter
    for _ in 0..5_000 {
        d.take(100, || time.now(), |_| panic!("waited")).unwrap();
        time.0.fetch_add(1, Ordering::SeqCst);
    }
    let s: Stats = clock.stats();
    assert_eq!((s.backward_jumps, s.waits), (1, 0));
}

#[test]
fn refusals_pass_through_and_take_nothing() {
    let clock = SharedClock::resume(0);
    let store = TestStore::default();
    let d = DurableClock::new(&clock, &store, 1_000);
    assert_eq!(d.take(0, || 1_000, |_| {}).unwrap_err(), Refusal::BadBatch);
    assert_eq!(
        d.take(1, || 0, |_| {}).unwrap_err(),
        Refusal::WallClockOutOfRange
    );
    d.take(1, || 1_000, |_| {}).unwrap();
    assert_eq!(
        d.observe(2_000 * MS, 500, || 1_000).unwrap_err(),
        Refusal::TooFarAhead { ahead_ms: 1_000 }
    );
    let exhausted = SharedClock::resume(EXHAUSTED);
    assert_eq!(
        DurableClock::new(&exhausted, &store, 1_000)
            .take(1, || 1_000, |_| {})
            .unwrap_err(),
        Refusal::Exhausted
    );
}

#[test]
fn observe_past_the_mark_reserves_first() {
    let clock = SharedClock::resume(0);
    let store = TestStore::default();
    let d = DurableClock::new(&clock, &store, 1_000);
    d.take(1, || 1_000, |_| {}).unwrap();
    let remote = 1_400 * MS + 9;
    store.failing.store(true, Ordering::SeqCst);
    clock.set_reserved(0); // no effect: never moves down
    let reserved = clock.reserved();
    if remote > reserved {
        assert_eq!(
            d.observe(remote, 500, || 1_000).unwrap_err(),
            Refusal::Store("disk full")
        );
    }
    store.failing.store(false, Ordering::SeqCst);
    d.observe(remote, 500, || 1_000).unwrap();
    assert!(store.durable.load(Ordering::SeqCst) >= remote);
    assert_eq!(d.take(1, || 1_000, |_| {}).unwrap().logical, remote + 1);
}

#[test]
fn recover_makes_a_mark_above_the_floor_durable_before_raising_the_clock() {
    let clock = SharedClock::resume(0);
    let store = TestStore::default();
    let d = DurableClock::new(&clock, &store, 1_000);
    store.failing.store(true, Ordering::SeqCst);
    assert_eq!(d.recover(9_000 * MS, 1_000), Err("disk full"));
    assert_eq!(clock.stats().logical, 0);
    store.failing.store(false, Ordering::SeqCst);
    let mark = d.recover(9_000 * MS, 1_000).unwrap();
    assert_eq!(mark, 10_000 * MS);
    assert_eq!(d.take(1, || 1_000, |_| {}).unwrap().logical, 9_000 * MS + 1);
}

#[test]
#[allow(deprecated)]
fn the_0_4_paths_name_the_same_items() {
    // hlculid_core::durable and ::persist were renamed mark and mark::file in 0.5.0; code
    // written against 0.4 still builds (with a deprecation warning)
    assert_eq!(crate::persist::FILE_NAME, file::FILE_NAME);
    assert_eq!(crate::persist::encode(42), file::encode(42));
    let refused: crate::durable::Refusal<()> = Refusal::Exhausted;
    assert_eq!(refused, Refusal::Exhausted);
}
