//! Ids made in an application, exactly as the server makes them: the same [`SharedClock`] (one
//! atomic step per id, the same rules for backward steps and counter carry), the same layout,
//! and optionally the same durable high-water mark file, so that a publisher process restarting
//! with its clock stepped back still issues increasing ids.
//!
//! ```
//! use hlculid_core::Generator;
//!
//! let ids = Generator::new(7); // publisher id 7
//! let a = ids.generate().unwrap();
//! let b = ids.generate().unwrap();
//! assert!(b > a);
//! assert_eq!(b.publisher(), 7);
//! ```

use crate::bigint::{self, BigId, BigIdError};
use crate::clock::{nth_value, SharedClock, Stats, EXHAUSTED};
use crate::layout::{Id, MAX_RANDOM};
use crate::mark::file as mark_file;
use crate::mark::{DurableClock, MarkStore, Refusal};
use crate::random::RandomSource;
use crate::text::is_random_uuid;
use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The server's default: how far ahead of the local clock an observed id may be.
pub const DEFAULT_MAX_SKEW: Duration = Duration::from_millis(500);
/// The server's window: the durable mark is kept this far ahead of the clock.
pub const DEFAULT_MARK_WINDOW: Duration = Duration::from_millis(1000);

/// Why an id could not be made, or an observed id was refused.
#[derive(Debug)]
pub enum Error {
    /// The system clock reads the Unix epoch itself, a time before it, or a time after
    /// 10889-08-02: no id is made and nothing changes.
    WallClockOutOfRange,
    /// The clock reached the end of the 48-bit millisecond range.
    Exhausted,
    /// The observed id is this many ms ahead of the local clock, more than the allowed skew;
    /// the clock was left unchanged.
    TooFarAhead { ahead_ms: u64 },
    /// The high-water mark file could not be written: no id is made until it can be.
    MarkWrite(std::io::Error),
    /// The high-water mark file exists but cannot be read or is not a mark; opening refuses,
    /// since ids from a clock without its floor could sort before earlier ones. Open with
    /// [`Builder::floor`] (the largest id known to have been issued) to recover.
    MarkDamaged(mark_file::LoadError),
    /// The operating system gave no random bytes.
    Random(String),
    /// `generate_n` of 0 or more than 65536 ids; nothing was taken.
    BadBatch,
    /// A bigint id holds a publisher of 0 to 1023 only; this generator's is larger.
    PublisherTooWideForBigint { publisher: u16 },
    /// The clock is past 2109-05-15, the last millisecond a bigint id can hold.
    BigintTimeOutOfRange,
    /// The value passed to [`Generator::observe`] is a random uuid (RFC 9562 version 4 with the
    /// RFC variant, what `gen_random_uuid()` makes), not an id of any clock: its time field is
    /// random, mostly centuries ahead. Refused whatever its time; the clock was left unchanged.
    RandomUuid,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::WallClockOutOfRange => {
                write!(f, "the system clock is outside hlculid's time range")
            }
            Error::Exhausted => write!(f, "the hlculid clock is exhausted"),
            Error::TooFarAhead { ahead_ms } => {
                write!(f, "the id is {ahead_ms} ms ahead of the local clock")
            }
            Error::MarkWrite(e) => write!(f, "could not write the high-water mark file: {e}"),
            Error::MarkDamaged(e) => write!(f, "the high-water mark file is damaged: {e}"),
            Error::Random(e) => write!(f, "no random bytes from the operating system: {e}"),
            Error::BadBatch => write!(f, "a batch holds 1 to 65536 ids"),
            Error::PublisherTooWideForBigint { publisher } => write!(
                f,
                "publisher {publisher} does not fit a bigint id (0 to 1023)"
            ),
            Error::BigintTimeOutOfRange => {
                write!(f, "the clock is past 2109-05-15, the end of bigint ids")
            }
            Error::RandomUuid => write!(
                f,
                "a random uuid (version 4 with the RFC 9562 variant) is not an hlculid; it was not observed"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// A thread-safe hybrid logical clock for one publisher. Share it (`Arc<Generator>` or a
/// `static`) across the threads of a process: every id it returns is greater than every id it
/// returned before, from any thread.
///
/// Like any in-memory clock it is not fork-safe: a forked child that kept using its parent's
/// generator would repeat the parent's values. Build a new one in the child (with a durable mark,
/// in its own directory); building one also gives every thread of the child a new random stream.
pub struct Generator {
    clock: SharedClock,
    publisher: u16,
    max_skew_ms: u64,
    mark: Mark,
    window_ms: u64,
    sources: Sources,
}

/// A wall clock read by the generator: Unix ms, 0 for a time before the epoch.
type ClockFn = Box<dyn Fn() -> u64 + Send + Sync>;
/// A wait at the run-ahead bound, of the ms given.
type SleepFn = Box<dyn Fn(u64) + Send + Sync>;
/// A source of random bits: the low 48 are used.
type RandomFn = Box<dyn FnMut() -> u64 + Send>;

/// Where the generator reads time, waits and draws random bits: the system's unless a
/// [`Builder`] was given others (for tests and simulations).
#[derive(Default)]
struct Sources {
    clock: Option<ClockFn>,
    sleep: Option<SleepFn>,
    random: Option<Mutex<RandomFn>>,
}

/// Where the generator's high-water mark is durable: nowhere (everything is reserved from the
/// start), or a file in a directory, with a lock for writes.
enum Mark {
    InMemory,
    File { dir: PathBuf, writing: Mutex<()> },
}

impl MarkStore for Mark {
    type Error = Error;

    fn serialised<R>(&self, f: impl FnOnce() -> R) -> R {
        match self {
            Mark::InMemory => f(),
            Mark::File { writing, .. } => {
                let _writing = writing.lock().unwrap_or_else(|e| e.into_inner());
                f()
            }
        }
    }

    fn store(&self, mark: u64) -> Result<(), Error> {
        match self {
            // everything was reserved: asking for more means the range is used up
            Mark::InMemory => Err(Error::Exhausted),
            Mark::File { dir, .. } => mark_file::store(dir, mark).map_err(Error::MarkWrite),
        }
    }
}

impl From<Refusal<Error>> for Error {
    fn from(r: Refusal<Error>) -> Error {
        match r {
            Refusal::Store(e) => e,
            Refusal::Exhausted => Error::Exhausted,
            Refusal::WallClockOutOfRange => Error::WallClockOutOfRange,
            Refusal::TooFarAhead { ahead_ms } => Error::TooFarAhead { ahead_ms },
            Refusal::BadBatch => Error::BadBatch,
        }
    }
}

/// Options for a [`Generator`]: see [`Generator::builder`].
pub struct Builder {
    publisher: u16,
    max_skew: Duration,
    mark: Option<(PathBuf, Duration)>,
    floor: Option<Id>,
    sources: Sources,
}

impl Builder {
    /// How far ahead of the local clock an id passed to [`Generator::observe`] may be
    /// (default 500 ms, like the server's `hlculid.max_clock_skew`). Also the run-ahead bound:
    /// generation never pushes the clock more than this beyond the system clock (or beyond where
    /// a restart, an observe or a backward step of the system clock put it); at the bound,
    /// `generate` waits for the system clock to move on.
    pub fn max_skew(mut self, skew: Duration) -> Builder {
        self.max_skew = skew;
        self
    }

    /// Keep a durable high-water mark in `dir` (file `hlculid.hwm`, the server's format): the
    /// clock never issues a value above the mark on disk, and a new generator on the same
    /// directory resumes above it. Costs one small fsync'd write per window (default 1 s) of
    /// generation. One process per directory.
    pub fn persist(mut self, dir: impl AsRef<Path>) -> Builder {
        self.mark = Some((dir.as_ref().to_path_buf(), DEFAULT_MARK_WINDOW));
        self
    }

    /// The window the durable mark is kept ahead (with [`persist`](Self::persist)).
    pub fn mark_window(mut self, window: Duration) -> Builder {
        if let Some((_, w)) = &mut self.mark {
            *w = window;
        }
        self
    }

    /// Every id the generator makes sorts after `floor` (no skew bound). With
    /// [`persist`](Self::persist), this also recovers from a damaged mark file: pass the largest
    /// id known to have been issued.
    pub fn floor(mut self, floor: Id) -> Builder {
        self.floor = Some(floor);
        self
    }

    /// Reads the wall clock from `clock` (Unix ms; 0 for a time before the epoch) instead of the
    /// system clock: for tests and simulations of clock steps
    /// (`core/tests/fixtures/clock_scenario.rs` drives one through a scripted clock).
    pub fn clock(mut self, clock: impl Fn() -> u64 + Send + Sync + 'static) -> Builder {
        self.sources.clock = Some(Box::new(clock));
        self
    }

    /// Waits at the run-ahead bound with `sleep(ms)` (1 to 10 ms a call; the clock is read
    /// again after each) instead of `std::thread::sleep`: with [`clock`](Self::clock), a
    /// simulated clock moves on by the ms given.
    pub fn sleep(mut self, sleep: impl Fn(u64) + Send + Sync + 'static) -> Builder {
        self.sources.sleep = Some(Box::new(sleep));
        self
    }

    /// Draws each id's random bits from `random` (its low 48 bits, one call per id in the order
    /// of the ids, under a lock) instead of a per-thread stream seeded from the operating
    /// system: for reproducible ids in tests. Ids from a predictable source are guessable.
    pub fn random(mut self, random: impl FnMut() -> u64 + Send + 'static) -> Builder {
        self.sources.random = Some(Mutex::new(Box::new(random)));
        self
    }

    pub fn build(self) -> Result<Generator, Error> {
        SEED_EPOCH.fetch_add(1, Ordering::Relaxed);
        let persisted = match &self.mark {
            None => 0,
            Some((dir, _)) => match (mark_file::load(dir), self.floor) {
                (Ok(mark), _) => mark.unwrap_or(0),
                (Err(_), Some(_)) => 0, // recovering: the floor replaces the damaged mark
                (Err(e), None) => return Err(Error::MarkDamaged(e)),
            },
        };
        let clock = SharedClock::resume(persisted);
        if let Some(floor) = self.floor {
            clock.raise_floor(floor.logical());
        }
        let max_skew_ms = millis(self.max_skew);
        clock.set_max_run_ahead(max_skew_ms);
        let (mark, window_ms) = match self.mark {
            None => {
                // nothing to persist: every value is reserved
                clock.set_reserved(EXHAUSTED - 1);
                (Mark::InMemory, 0)
            }
            Some((dir, window)) => (
                Mark::File {
                    dir,
                    writing: Mutex::new(()),
                },
                millis(window),
            ),
        };
        Ok(Generator {
            clock,
            publisher: self.publisher,
            max_skew_ms,
            mark,
            window_ms,
            sources: self.sources,
        })
    }
}

/// Bumped by every [`Builder::build`]: a thread whose random stream was seeded before the latest
/// build seeds a new one. A forked child builds its own generator (see [`Generator`]), and so
/// never continues its parent's stream.
static SEED_EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Each thread's random stream, with the epoch it was seeded in.
    static RANDOM: RefCell<Option<(u64, RandomSource)>> = const { RefCell::new(None) };
}

fn random48() -> Result<u64, Error> {
    let epoch = SEED_EPOCH.load(Ordering::Relaxed);
    RANDOM.with(|slot| {
        let mut slot = slot.borrow_mut();
        match &mut *slot {
            Some((e, r)) if *e == epoch => Ok(r.next48()),
            _ => {
                let mut r = RandomSource::from_os().map_err(|e| Error::Random(e.to_string()))?;
                let v = r.next48();
                *slot = Some((epoch, r));
                Ok(v)
            }
        }
    })
}

fn millis(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

/// The system clock in Unix ms; 0 before the epoch, which the clock refuses.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Generator {
    /// An in-memory generator for `publisher` with the default skew bound. Its ids increase
    /// for as long as the process runs; use [`builder`](Self::builder) with
    /// [`persist`](Builder::persist) for ids that keep increasing across restarts.
    pub fn new(publisher: u16) -> Generator {
        Generator::builder(publisher)
            .build()
            .expect("an in-memory generator has no file to fail on")
    }

    pub fn builder(publisher: u16) -> Builder {
        Builder {
            publisher,
            max_skew: DEFAULT_MAX_SKEW,
            mark: None,
            floor: None,
            sources: Sources::default(),
        }
    }

    pub fn publisher(&self) -> u16 {
        self.publisher
    }

    /// The next id: greater than every id this generator returned before.
    pub fn generate(&self) -> Result<Id, Error> {
        let first = self.take(1)?;
        Ok(Id::from_logical(first, self.publisher, self.random48()?))
    }

    /// `n` ids (1 to 65536) from one atomic step of the clock, in increasing order, every one
    /// greater than every id returned before; for pre-allocating ids.
    pub fn generate_n(&self, n: usize) -> Result<Vec<Id>, Error> {
        let first = self.take(n as u64)?;
        (0..n as u64)
            .map(|i| {
                Ok(Id::from_logical(
                    first + i,
                    self.publisher,
                    self.random48()?,
                ))
            })
            .collect()
    }

    /// The next bigint id (`[0][42-bit ms][11-bit counter][10-bit publisher]`) from the same
    /// clock as [`generate`](Self::generate): greater than every id (of either width) this
    /// generator returned before, in the sense of [`BigId::to_id`]. The publisher must be 0 to
    /// 1023.
    pub fn generate_bigint(&self) -> Result<BigId, Error> {
        Ok(self.generate_bigint_n(1)?[0])
    }

    /// `n` bigint ids (1 to 65536) from one atomic step of the clock, increasing.
    pub fn generate_bigint_n(&self, n: usize) -> Result<Vec<BigId>, Error> {
        let publisher = u32::from(self.publisher);
        if publisher > bigint::MAX_PUBLISHER {
            return Err(Error::PublisherTooWideForBigint {
                publisher: self.publisher,
            });
        }
        let first = self
            .durable()
            .take_batch(
                n as u64,
                bigint::COUNTER_VALUES,
                || self.now(),
                |ms| self.pace(ms),
            )?
            .logical;
        (0..n as u64)
            .map(|i| {
                BigId::from_logical(nth_value(first, i, bigint::COUNTER_VALUES), publisher).map_err(
                    |e| match e {
                        BigIdError::OutOfRange(crate::Field::Timestamp) => {
                            Error::BigintTimeOutOfRange
                        }
                        _ => unreachable!("counter and publisher were checked"),
                    },
                )
            })
            .collect()
    }

    fn take(&self, n: u64) -> Result<u64, Error> {
        Ok(self
            .durable()
            .take(n, || self.now(), |ms| self.pace(ms))?
            .logical)
    }

    /// The wall clock in Unix ms.
    fn now(&self) -> u64 {
        match &self.sources.clock {
            Some(clock) => clock(),
            None => now_ms(),
        }
    }

    /// Waits at the run-ahead bound: short sleeps, since the clock is read again after each.
    fn pace(&self, wait_ms: u64) {
        let ms = wait_ms.clamp(1, 10);
        match &self.sources.sleep {
            Some(sleep) => sleep(ms),
            None => std::thread::sleep(Duration::from_millis(ms)),
        }
    }

    /// 48 random bits for the next id.
    fn random48(&self) -> Result<u64, Error> {
        match &self.sources.random {
            Some(random) => Ok(random.lock().unwrap_or_else(|e| e.into_inner())() & MAX_RANDOM),
            None => random48(),
        }
    }

    fn durable(&self) -> DurableClock<'_, Mark> {
        DurableClock::new(&self.clock, &self.mark, self.window_ms)
    }

    /// The receive rule: every id generated afterwards sorts after `remote` (an id received
    /// from another publisher). Refused, leaving the clock unchanged, when `remote` is further
    /// ahead of the local clock than the skew bound (unless the clock is already past it), and
    /// when it is a random uuid ([`Error::RandomUuid`], whatever its time; see
    /// [`is_random_uuid`]).
    pub fn observe(&self, remote: Id) -> Result<(), Error> {
        if is_random_uuid(remote) {
            return Err(Error::RandomUuid);
        }
        Ok(self
            .durable()
            .observe(remote.logical(), self.max_skew_ms, || self.now())?)
    }

    /// The horizon an application publisher reports (`hlculid_advance_horizon(publisher,
    /// horizon)` on the server): every id this generator made before the call is below it, and
    /// every id it makes afterwards is at or above it. The clock is first brought up to the wall
    /// clock, so an idle publisher's horizon moves with time. Report it once every id made
    /// before the call has been sent (the server's ingester commits it).
    pub fn horizon(&self) -> Result<Id, Error> {
        self.take(1)?;
        Ok(Id::from_logical(self.clock.current() + 1, 0, 0))
    }

    /// The clock's counters (backward steps of the system clock seen, counter carries, observes,
    /// waits at the run-ahead bound).
    pub fn stats(&self) -> Stats {
        self.clock.stats()
    }
}

#[cfg(test)]
mod tests;
