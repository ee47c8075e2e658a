use super::*;
use std::collections::HashSet;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hlculid-gen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn ids_from_many_threads_are_unique_and_each_thread_sees_them_increase() {
    let ids = Arc::new(Generator::new(3));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let ids = ids.clone();
            std::thread::spawn(move || {
                let v: Vec<Id> = (0..20_000).map(|_| ids.generate().unwrap()).collect();
                assert!(v.windows(2).all(|w| w[0] < w[1]));
                v
            })
        })
        .collect();
    let all: Vec<Id> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), all.len());
    assert!(all.iter().all(|id| id.publisher() == 3));
    // the logical parts are distinct too: one atomic step per id, as on the server
    assert_eq!(
        all.iter()
            .map(|id| id.logical())
            .collect::<HashSet<_>>()
            .len(),
        all.len()
    );
}

#[test]
fn ids_carry_the_system_time() {
    let before = now_ms();
    let id = Generator::new(1).generate().unwrap();
    let after = now_ms();
    assert!(
        (before..=after).contains(&id.ms()),
        "{before} {} {after}",
        id.ms()
    );
}

#[test]
fn observe_within_the_skew_moves_the_clock_and_beyond_it_changes_nothing() {
    let ids = Generator::builder(4)
        .max_skew(Duration::from_millis(500))
        .build()
        .unwrap();
    let remote = Id::max_of_ms(now_ms() + 300).unwrap();
    ids.observe(remote).unwrap();
    assert!(ids.generate().unwrap() > remote);
    let before = ids.stats();
    let far = Id::min_of_ms(now_ms() + 5_000).unwrap();
    match ids.observe(far) {
        Err(Error::TooFarAhead { ahead_ms }) => assert!(ahead_ms >= 4_000),
        other => panic!("{other:?}"),
    }
    assert_eq!(ids.stats().logical, before.logical);
    assert_eq!(ids.stats().observes, 1);
}

#[test]
fn a_persisted_generator_resumes_above_everything_issued_before() {
    let dir = tempdir("resume");
    // A first run whose clock was 10 s ahead (as after a clock that later steps back 10 s):
    // the floor puts its logical time there.
    let ahead = Id::min_of_ms(now_ms() + 10_000).unwrap();
    let first = Generator::builder(5)
        .persist(&dir)
        .floor(ahead)
        .build()
        .unwrap();
    let last = (0..1000).map(|_| first.generate().unwrap()).max().unwrap();
    assert!(last > ahead);
    drop(first);
    // The next run, with today's clock: still above the first run's ids.
    let second = Generator::builder(5).persist(&dir).build().unwrap();
    let next = second.generate().unwrap();
    assert!(next > last, "{next} <= {last}");
    // The mark file is the server's format.
    let mark = mark_file::load(&dir).unwrap().unwrap();
    assert!(mark >= next.logical());
}

#[test]
fn a_damaged_mark_refuses_to_open_until_given_a_floor() {
    let dir = tempdir("damaged");
    let g = Generator::builder(6).persist(&dir).build().unwrap();
    let last = g.generate().unwrap();
    drop(g);
    std::fs::write(dir.join(mark_file::FILE_NAME), b"garbage").unwrap();
    match Generator::builder(6).persist(&dir).build() {
        Err(Error::MarkDamaged(_)) => {}
        other => panic!("opened: {:?}", other.map(|g| g.publisher())),
    }
    let g = Generator::builder(6)
        .persist(&dir)
        .floor(last)
        .build()
        .unwrap();
    assert!(g.generate().unwrap() > last);
    assert!(mark_file::load(&dir).is_ok());
}

#[test]
fn a_mark_that_cannot_be_written_stops_ids_until_it_can() {
    let dir = tempdir("unwritable");
    let g = Generator::builder(7)
        .persist(&dir)
        .mark_window(Duration::from_millis(1))
        .build()
        .unwrap();
    let first = g.generate().unwrap();
    // the directory goes away: the next reservation cannot be written
    std::fs::remove_dir_all(&dir).unwrap();
    std::thread::sleep(Duration::from_millis(5));
    let refused = (0..100)
        .filter(|_| matches!(g.generate(), Err(Error::MarkWrite(_))))
        .count();
    // nothing is taken while the mark cannot be written: every call is refused
    assert_eq!(refused, 100);
    std::fs::create_dir_all(&dir).unwrap();
    let next = g.generate().unwrap();
    assert!(next > first);
}

#[test]
fn a_batch_is_increasing_and_above_everything_before() {
    let ids = Generator::new(8);
    let before = ids.generate().unwrap();
    let batch = ids.generate_n(1000).unwrap();
    assert_eq!(batch.len(), 1000);
    assert!(batch[0] > before);
    assert!(batch.windows(2).all(|w| w[0] < w[1]));
    assert!(ids.generate().unwrap() > batch[999]);
    assert!(matches!(ids.generate_n(0), Err(Error::BadBatch)));
    assert!(matches!(ids.generate_n(65_537), Err(Error::BadBatch)));
}

#[test]
fn bigint_ids_come_from_the_same_clock_as_128_bit_ids() {
    let ids = Generator::new(1023);
    let mut last = ids.generate().unwrap();
    for round in 0..200 {
        let b = ids.generate_bigint_n(1 + round * 37).unwrap();
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        assert!(b[0].to_id() > last, "round {round}");
        assert!(b.iter().all(|x| x.publisher() == 1023 && x.to_i64() > 0));
        let wide = ids.generate().unwrap();
        assert!(wide > b.last().unwrap().to_id());
        last = wide;
    }
    let single = ids.generate_bigint().unwrap();
    assert!(single.to_id() > last);
}

#[test]
fn bigint_ids_refuse_a_publisher_over_1023() {
    let ids = Generator::new(1024);
    assert!(matches!(
        ids.generate_bigint(),
        Err(Error::PublisherTooWideForBigint { publisher: 1024 })
    ));
    // and nothing was taken
    assert_eq!(ids.stats().logical, 0);
}

#[test]
fn the_horizon_lies_between_the_ids_made_before_and_after_it() {
    let ids = Generator::new(7);
    let before = ids.generate_n(1000).unwrap();
    let h = ids.horizon().unwrap();
    let after = ids.generate().unwrap();
    assert!(before.iter().all(|id| *id < h));
    assert!(h <= after);
    // exclusive, with no publisher or random bits
    assert_eq!(h.to_u128() & u128::from(u64::MAX), 0);
    // a bigint id made after it is at or above it too
    let big = ids.generate_bigint().unwrap();
    assert!(h <= big.to_id());
}

#[test]
fn an_idle_generator_s_horizon_moves_with_the_wall_clock() {
    let ids = Generator::new(7);
    let id = ids.generate().unwrap();
    let h1 = ids.horizon().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let h2 = ids.horizon().unwrap();
    assert!(id < h1 && h1 < h2);
    assert!(
        h2.to_u128() >> 80 > id.to_u128() >> 80,
        "the horizon's millisecond moved on"
    );
}

#[test]
fn observe_refuses_a_random_uuid_whatever_its_time() {
    let ids = Generator::new(9);
    let mine = ids.generate().unwrap();
    // a version 4 uuid with the RFC variant, dated within the skew and dated behind the clock
    for ms in [now_ms() + 100, 1] {
        let random = Id::from_logical(ms << 16 | 0x4123, 0x8abc, 0x1234);
        let before = ids.stats();
        assert!(
            matches!(ids.observe(random), Err(Error::RandomUuid)),
            "{random}"
        );
        assert_eq!(ids.stats(), before);
    }
    // the same fields without the variant are an id
    let id = Id::from_logical((now_ms() + 100) << 16 | 0x4123, 0x0abc, 0x1234);
    ids.observe(id).unwrap();
    assert!(ids.generate().unwrap() > id && id > mine);
}

#[test]
fn an_injected_clock_sleep_and_random_source_make_the_same_ids_twice() {
    fn run() -> Vec<Id> {
        let now = Arc::new(AtomicU64::new(1_780_000_000_000));
        let (read, wait) = (now.clone(), now.clone());
        let mut seed = 7u64;
        let ids = Generator::builder(3)
            .max_skew(Duration::from_millis(1))
            .clock(move || read.load(Ordering::SeqCst))
            .sleep(move |ms| {
                wait.fetch_add(ms, Ordering::SeqCst);
            })
            .random(move || {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                seed
            })
            .build()
            .unwrap();
        // three milliseconds' counters from a frozen clock: the bound (1 ms) is reached and the
        // simulated sleep moves the clock on
        let v: Vec<Id> = (0..3 * 65_536).map(|_| ids.generate().unwrap()).collect();
        assert!(ids.stats().waits > 0);
        assert!(now.load(Ordering::SeqCst) > 1_780_000_000_000);
        v
    }
    let (a, b) = (run(), run());
    assert!(a.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(a, b);
}
