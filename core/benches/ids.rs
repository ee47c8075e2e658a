//! The crate against what a Rust application would pick instead, in one run: generating ids
//! (hlculid's Generator, uuid's `Uuid::now_v7()`, ulid's `Generator`) on one thread and on two,
//! and parsing and formatting (hlculid vs the uuid crate); then the masks (128-bit and bigint,
//! both ways, and the v4 facade) against the generator. Plain timed loops, contenders interleaved, median of 7
//! rounds; prints ns per id and the ratios the README quotes.
//!
//! cargo bench -p hlculid-core --bench ids [-- --quick]

use hlculid_core::{Generator, Id, Mask};
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::Instant;

const ROUNDS: usize = 7;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// ns per operation of `f(n)`, which performs n operations.
fn time(n: usize, f: &dyn Fn(usize)) -> f64 {
    let t = Instant::now();
    f(n);
    t.elapsed().as_nanos() as f64 / n as f64
}

/// Runs each contender once per round, interleaved, and returns the medians.
fn compare(n: usize, contenders: &[(&str, &dyn Fn(usize))]) -> Vec<f64> {
    let mut samples = vec![Vec::new(); contenders.len()];
    for _ in 0..ROUNDS {
        for (i, (_, f)) in contenders.iter().enumerate() {
            samples[i].push(time(n, *f));
        }
    }
    samples.into_iter().map(median).collect()
}

fn on_threads(threads: usize, n: usize, f: impl Fn(usize) + Sync) {
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| f(n / threads));
        }
    });
}

fn report(title: &str, names: &[&str], medians: &[f64], target: Option<(usize, usize, f64)>) {
    println!("\n{title}");
    for (name, m) in names.iter().zip(medians) {
        println!(
            "  {name:<28} {m:>8.1} ns/op  ({:.2}x of {})",
            m / medians[0],
            names[0]
        );
    }
    if let Some((a, b, limit)) = target {
        let ratio = medians[a] / medians[b];
        let verdict = if ratio <= limit { "met" } else { "MISSED" };
        println!(
            "  target: {} at most {limit:.2}x {}: {ratio:.2}x, {verdict}",
            names[a], names[b]
        );
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let n = if quick { 100_000 } else { 2_000_000 };

    let hl = Arc::new(Generator::new(1));
    let ulid_gen = Mutex::new(ulid::Generator::new());
    let names = [
        "hlculid Generator::generate",
        "uuid Uuid::now_v7",
        "ulid Generator::generate",
    ];
    for threads in [1, 2] {
        let m = compare(
            n,
            &[
                (names[0], &|n| {
                    on_threads(threads, n, |k| {
                        for _ in 0..k {
                            black_box(hl.generate().unwrap());
                        }
                    })
                }),
                (names[1], &|n| {
                    on_threads(threads, n, |k| {
                        for _ in 0..k {
                            black_box(uuid::Uuid::now_v7());
                        }
                    })
                }),
                (names[2], &|n| {
                    on_threads(threads, n, |k| {
                        for _ in 0..k {
                            black_box(ulid_gen.lock().unwrap().generate().unwrap());
                        }
                    })
                }),
            ],
        );
        report(
            &format!("generate, {threads} thread(s), per id"),
            &names,
            &m,
            (threads == 1).then_some((0, 1, 1.0)),
        );
    }

    let ids: Vec<Id> = (0..1000).map(|_| hl.generate().unwrap()).collect();
    let texts: Vec<String> = ids.iter().map(Id::to_string).collect();
    let uuids: Vec<uuid::Uuid> = ids.iter().map(|i| uuid::Uuid::from_bytes(i.0)).collect();
    let uuid_texts: Vec<String> = uuids.iter().map(uuid::Uuid::to_string).collect();
    let parse_names = ["hlculid parse (12-4-4-12)", "uuid parse_str (8-4-4-4-12)"];
    let m = compare(
        n,
        &[
            (parse_names[0], &|n| {
                for i in 0..n {
                    black_box(texts[i % 1000].parse::<Id>().unwrap());
                }
            }),
            (parse_names[1], &|n| {
                for i in 0..n {
                    black_box(uuid::Uuid::parse_str(&uuid_texts[i % 1000]).unwrap());
                }
            }),
        ],
    );
    report("parse, per id", &parse_names, &m, Some((0, 1, 1.5)));

    let format_names = ["hlculid to_string", "uuid to_string"];
    let m = compare(
        n,
        &[
            (format_names[0], &|n| {
                for i in 0..n {
                    black_box(ids[i % 1000].to_string());
                }
            }),
            (format_names[1], &|n| {
                for i in 0..n {
                    black_box(uuids[i % 1000].to_string());
                }
            }),
        ],
    );
    report("format, per id", &format_names, &m, Some((0, 1, 1.5)));
    let mask = Mask::new(*b"0123456789abcdef");
    let masked: Vec<[u8; 16]> = ids.iter().map(|&i| mask.mask(i)).collect();
    let bigs: Vec<i64> = (0..1000)
        .map(|_| hl.generate_bigint().unwrap().to_i64())
        .collect();
    let masked_bigs: Vec<i64> = bigs.iter().map(|&b| mask.mask_bigint(b).unwrap()).collect();
    let facades: Vec<[u8; 16]> = ids.iter().map(|&i| mask.to_v4_facade(i)).collect();
    let mask_names = [
        "hlculid Generator::generate",
        "Mask::mask",
        "Mask::unmask",
        "Mask::mask_bigint",
        "Mask::unmask_bigint",
        "Mask::to_v4_facade",
        "Mask::from_v4_facade",
    ];
    let m = compare(
        n,
        &[
            (mask_names[0], &|n| {
                for _ in 0..n {
                    black_box(hl.generate().unwrap());
                }
            }),
            (mask_names[1], &|n| {
                for i in 0..n {
                    black_box(mask.mask(black_box(ids[i % 1000])));
                }
            }),
            (mask_names[2], &|n| {
                for i in 0..n {
                    black_box(mask.unmask(black_box(masked[i % 1000])));
                }
            }),
            (mask_names[3], &|n| {
                for i in 0..n {
                    black_box(mask.mask_bigint(black_box(bigs[i % 1000])).unwrap());
                }
            }),
            (mask_names[4], &|n| {
                for i in 0..n {
                    black_box(
                        mask.unmask_bigint(black_box(masked_bigs[i % 1000]))
                            .unwrap(),
                    );
                }
            }),
            (mask_names[5], &|n| {
                for i in 0..n {
                    black_box(mask.to_v4_facade(black_box(ids[i % 1000])));
                }
            }),
            (mask_names[6], &|n| {
                for i in 0..n {
                    black_box(mask.from_v4_facade(black_box(facades[i % 1000])).unwrap());
                }
            }),
        ],
    );
    report("masks, per id", &mask_names, &m, None);
}
