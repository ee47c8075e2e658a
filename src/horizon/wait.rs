//! Waiting for rows without polling: `hlculid_wait` and `hlculid_consumer_wait` sleep on one
//! shared ConditionVariable, broadcast at the end of a transaction (src/generate/xact_callbacks.rs
//! calls [`table_written`] and [`transaction_ended`]) when what it did can have made a waiter's
//! row readable:
//! - it committed and wrote the table a waiter waits on: it holds that table's ROW EXCLUSIVE
//!   lock until its locks are released, looked up in its own lock table (no catalog access);
//! - it made ids (its slot moved the horizon) and some waiter waits on the horizon: a waiter
//!   whose last check saw rows after its position that the horizon still hid, or one whose table
//!   inserts may bypass (a partitioned or inherited table, a view, one Citus manages);
//! - a prepared transaction's hold may have ended with it (COMMIT or ROLLBACK PREPARED).
//!
//! A waiter whose last check found no row at all after its position sleeps through commits that
//! wrote other tables: ten idle consumers cost writers elsewhere a few lock-table lookups a commit.
//!
//! Each waiter is in horizon mode while it checks and leaves it only when the check found
//! nothing after its position, so a writer ending in between cannot go unseen. The counts and
//! what a writer did form Dekker pairs: the waiter registers (its table, its mode), then (fence)
//! checks with a new snapshot; the writer's commit is visible (or its slot cleared), then (fence)
//! it reads the registrations. Either the writer sees the waiter, or the waiter's check sees
//! what the writer did. A broadcast bumps a sequence number first, so a waiter that read the
//! number before its check never sleeps through a broadcast that came after it.
//!
//! Each check is a query with a NEW snapshot (SPI not read-only, READ COMMITTED statement
//! semantics), never the caller's: `hlculid_read(table_row, after, 1)` for `hlculid_wait`, the
//! consumer's due retries and its next row for `hlculid_consumer_wait`. While the waiter sleeps it
//! runs no query and takes no CPU; a cancel or a terminate ends the sleep at once (the
//! ConditionVariable's latch wait checks for interrupts).

use crate::base::backend_local::BackendLocal;
use crate::base::errors::{Condition, UserError};
use crate::clock::shared as shmem;
use crate::types::datum::Hlculid;
use pgrx::prelude::*;
use std::ffi::{CStr, CString};
use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest a waiter on a table Citus manages sleeps between checks: another node's commit
/// broadcasts nothing here; the cluster horizon's worker wakes the waiters when the horizon it
/// keeps moves (0.6.0), and this is the backstop.
const CITUS_RECHECK: Duration = Duration::from_millis(250);

/// Waiters that register their table; more wait in horizon mode only (still correct, woken
/// more often).
const TABLE_SLOTS: usize = 256;

#[repr(C, align(64))]
struct Shared {
    /// Backends inside a wait.
    waiters: AtomicU32,
    /// Waiters in horizon mode: woken by every transaction that made ids.
    horizon_waiters: AtomicU32,
    /// Waiters without a table slot (a partitioned or inherited table, a view, one Citus
    /// manages, past the slots): woken by every commit that wrote anything, too.
    slotless: AtomicU32,
    /// Bumped by every broadcast for the waiters in horizon mode (and for everyone), before it
    /// wakes anyone.
    seq: AtomicU64,
    /// One past the highest table slot ever taken (writers read no further).
    used: AtomicU32,
    /// Committed transactions that wrote anything, counted on a Citus node only
    /// ([`hlculid_writing_commits`]).
    commits: AtomicU64,
    /// The table each registered waiter waits on.
    tables: [TableSlot; TABLE_SLOTS],
    cv: pg_sys::ConditionVariable,
}

struct TableSlot {
    /// The table: its database's OID in the high half, its own in the low one (0: a free slot).
    key: AtomicU64,
    /// Bumped when a committed transaction wrote it (and for everyone), before the broadcast.
    seq: AtomicU64,
}

static SHARED: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());

static mut PREV_REQUEST: Option<unsafe extern "C-unwind" fn()> = None;
static mut PREV_STARTUP: Option<unsafe extern "C-unwind" fn()> = None;

/// Registers the shared memory; `_PG_init` calls it during `shared_preload_libraries` only.
pub fn init() {
    // SAFETY: _PG_init of a preloaded library runs once in the postmaster, before any hook is
    // called; chaining the previous hooks is what every extension does.
    unsafe {
        PREV_REQUEST = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(request);
        PREV_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(startup);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn request() {
    // SAFETY: the hook chain, as installed by init; called by the postmaster once.
    unsafe {
        if let Some(prev) = PREV_REQUEST {
            prev();
        }
        pg_sys::RequestAddinShmemSpace(std::mem::size_of::<Shared>() + 64);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn startup() {
    // SAFETY: the hook chain, then the region (shmem::add_in_region's protocol), from the hook;
    // the ConditionVariable is initialised once, in the zeroed region.
    unsafe {
        if let Some(prev) = PREV_STARTUP {
            prev();
        }
        let p = shmem::add_in_region(c"hlculid_wait", std::mem::size_of::<Shared>(), |p| {
            pg_sys::ConditionVariableInit(&raw mut (*p.cast::<Shared>()).cv);
        });
        SHARED.store(p.cast(), Ordering::Release);
    }
}

fn shared() -> Option<&'static Shared> {
    // SAFETY: set once per shared memory segment by `startup` (in the postmaster, inherited by
    // every backend); the region lives as long as the segment.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

fn cv(s: &'static Shared) -> *mut pg_sys::ConditionVariable {
    // The ConditionVariable is shared memory that PostgreSQL's functions change under its own
    // spinlock: only ever reached through this pointer.
    (&raw const s.cv).cast_mut()
}

/// Whether commits are counted here: on a node that preloads Citus, where the cluster horizon's
/// worker reads the count ([`count_commits`]).
static COUNT_COMMITS: AtomicBool = AtomicBool::new(false);

/// Counts, from now on, the commits that can show rows (`_PG_init` on a Citus node, through the
/// cluster horizon's worker's `init`).
pub fn count_commits() {
    COUNT_COMMITS.store(true, Ordering::Relaxed);
}

/// SQL `hlculid_writing_commits()`: how many transactions committed on this server, since it
/// started, having written anything (a `COMMIT PREPARED` counts; so does a logical replication
/// apply worker's transaction); NULL where it is not counted (a server without
/// Citus preloaded, or without hlculid preloaded). The cluster horizon's worker reads it on every
/// node each round: a waiter on a table Citus manages reads the table again only when it moved.
#[pg_extern(volatile, parallel_safe)]
fn hlculid_writing_commits() -> Option<i64> {
    let s = shared()?;
    COUNT_COMMITS
        .load(Ordering::Relaxed)
        .then(|| s.commits.load(Ordering::SeqCst) as i64)
}

/// Whether this backend's committing transaction wrote a table a waiter waits on (whose slots
/// [`table_written`] bumped): the broadcast comes from [`transaction_ended`], after the slot.
static WROTE_WAITED_TABLE: AtomicBool = AtomicBool::new(false);
/// Whether it wrote anything while waiters without a slot wait ([`table_written`]).
static WROTE_FOR_SLOTLESS: AtomicBool = AtomicBool::new(false);
/// The tables whose waiters wake when this transaction commits, though it wrote none of them
/// ([`hlculid_wake_waiters_at_commit`]: a consumer's position or retries changed).
static WAKE_TABLES: BackendLocal<Vec<pg_sys::Oid>> = BackendLocal::new(Vec::new());

fn table_key(database: pg_sys::Oid, table: pg_sys::Oid) -> u64 {
    (u64::from(database.to_u32()) << 32) | u64::from(table.to_u32())
}

/// SQL `hlculid_wake_waiters_at_commit(tbl)`: the waiters on `tbl` (and those without a table
/// slot) wake when the calling transaction commits: the consumer functions call it when they
/// move a position or schedule a retry, which no write to the consumer's table shows. Only a
/// role that may read the table: a waiter woken for nothing checks once.
#[pg_extern(volatile, parallel_unsafe)]
fn hlculid_wake_waiters_at_commit(tbl: pg_sys::Oid) {
    // SAFETY: the current user's OID; PostgreSQL's ACL check of a relation (an OID that names
    // none is its own 42P01 error).
    let allowed = unsafe {
        pg_sys::pg_class_aclcheck(tbl, pg_sys::GetUserId(), pg_sys::ACL_SELECT as _)
            == pg_sys::AclResult::ACLCHECK_OK
    };
    if !allowed {
        UserError::new(
            Condition::NotTableOwner,
            "hlculid_wake_waiters_at_commit needs SELECT on the table",
        )
        .hint("Only a role that may read the table wakes its waiters.")
        .raise()
    }
    // SAFETY: the backend's thread; the closure does not reach WAKE_TABLES again.
    unsafe { WAKE_TABLES.with(|t| t.push(tbl)) };
}

/// At a transaction's end: bumps the slots of the tables [`hlculid_wake_waiters_at_commit`]
/// named, when it committed; whether it did (the list is emptied at every end).
fn wake_named_tables(s: &'static Shared, committed: bool) -> bool {
    // SAFETY: the backend's thread; the closure does not reach WAKE_TABLES again.
    let named = unsafe { WAKE_TABLES.with(std::mem::take) };
    if named.is_empty() || !committed {
        return false;
    }
    // SAFETY: a backend global, set once at connection.
    let database = unsafe { pg_sys::MyDatabaseId };
    bump_slots(s, |key| {
        named.iter().any(|&oid| table_key(database, oid) == key)
    });
    true
}

/// Whether the statement this transaction ran is COMMIT PREPARED or ROLLBACK PREPARED: the
/// backend that runs one holds none of the prepared transaction's locks, and its hold (if it
/// made ids) may already be cleared by a reader, so its end wakes every waiter. Such a statement
/// runs alone, outside any transaction block, so it is the whole of the statement's text.
fn finishing_prepared() -> bool {
    // SAFETY: PostgreSQL's text of the statement being run (NULL outside one), set for the
    // statement's whole run, its commit included.
    let text = unsafe { pg_sys::debug_query_string };
    // SAFETY: non-NULL: a NUL-terminated string that outlives this call.
    !text.is_null() && finishes_prepared(unsafe { CStr::from_ptr(text) }.to_bytes())
}

/// Whether `sql` starts with COMMIT PREPARED or ROLLBACK PREPARED, after whitespace, empty
/// statements (`;`) and comments, in any case; bytes, as any server encoding gives them.
fn finishes_prepared(sql: &[u8]) -> bool {
    let mut rest = sql;
    let mut words: [&[u8]; 2] = [b""; 2];
    for word in &mut words {
        rest = skip_blank(rest);
        let n = rest
            .iter()
            .position(|c| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        (*word, rest) = rest.split_at(n);
    }
    (words[0].eq_ignore_ascii_case(b"commit") || words[0].eq_ignore_ascii_case(b"rollback"))
        && words[1].eq_ignore_ascii_case(b"prepared")
}

/// `s` after its leading whitespace, `;` and comments (`--` to the line's end, `/* */` nested).
fn skip_blank(mut s: &[u8]) -> &[u8] {
    loop {
        while let [c, r @ ..] = s {
            // PostgreSQL's lexer's whitespace: Rust's ASCII whitespace and the vertical tab
            if !(c.is_ascii_whitespace() || *c == 0x0b || *c == b';') {
                break;
            }
            s = r;
        }
        // a comment runs to the end of its line, which \n or \r ends (PostgreSQL's lexer)
        if let Some(r) = s.strip_prefix(b"--") {
            s = r
                .iter()
                .position(|&c| c == b'\n' || c == b'\r')
                .map_or(&[][..], |i| &r[i + 1..]);
        } else if let Some(r) = s.strip_prefix(b"/*") {
            let (mut depth, mut i) = (1, 0);
            while i < r.len() && depth > 0 {
                if r[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if r[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                } else {
                    i += 1;
                }
            }
            s = r.get(i..).unwrap_or(&[]);
        } else {
            return s;
        }
    }
}

/// The resource-release callback's part before locks are released (src/generate/xact_callbacks.rs),
/// on commit only: whether the transaction holds ROW EXCLUSIVE on a table some waiter waits on
/// (INSERT, COPY, UPDATE, MERGE, logical replication's apply take it until the end). Its commit
/// is visible in the proc array by now. Without waiters: one atomic read.
pub fn table_written() {
    let Some(s) = shared() else { return };
    if COUNT_COMMITS.load(Ordering::Relaxed) && wrote_or_applied() {
        // after the commit is visible in the proc array (a round that reads the count before
        // this sees the rows by the time a waiter reads the table), and before the horizon's
        // slot is cleared (no horizon passes the rows before the count moved)
        s.commits.fetch_add(1, Ordering::SeqCst);
    }
    // ProcArrayEndTransaction's release of ProcArrayLock, a full barrier, came before
    if s.waiters.load(Ordering::SeqCst) == 0 {
        return;
    }
    // SAFETY: a backend global, set once at connection.
    let database = u64::from(unsafe { pg_sys::MyDatabaseId }.to_u32());
    let wrote = bump_slots(s, |key| {
        key >> 32 == database
            && crate::base::pg_c::holds_row_exclusive(pg_sys::Oid::from(key as u32))
    });
    if wrote {
        WROTE_WAITED_TABLE.store(true, Ordering::Relaxed);
    }
    if s.slotless.load(Ordering::SeqCst) > 0
        // SAFETY: reads the transaction state's xid, still set until the end of the commit.
        && unsafe { pg_sys::GetTopTransactionIdIfAny() } != pg_sys::InvalidTransactionId
    {
        WROTE_FOR_SLOTLESS.store(true, Ordering::Relaxed);
    }
}

/// Whether the committing transaction wrote anything (its xid is set until the end of the
/// commit), is logical replication's apply, or finished a prepared transaction.
fn wrote_or_applied() -> bool {
    // SAFETY: reads the transaction state's xid; never raises.
    let xid = unsafe { pg_sys::GetTopTransactionIdIfAny() };
    // SAFETY: a flag of the process, set at its start.
    xid != pg_sys::InvalidTransactionId
        || unsafe { pg_sys::IsLogicalWorker() }
        || finishing_prepared()
}

/// Bumps the number of every taken slot whose key `matches`; whether any matched.
fn bump_slots(s: &'static Shared, matches: impl Fn(u64) -> bool) -> bool {
    let used = (s.used.load(Ordering::SeqCst) as usize).min(TABLE_SLOTS);
    let mut any = false;
    for t in &s.tables[..used] {
        let key = t.key.load(Ordering::SeqCst);
        if key != 0 && matches(key) {
            t.seq.fetch_add(1, Ordering::SeqCst);
            any = true;
        }
    }
    any
}

/// Every waiter's numbers bumped: rows may have come to any table.
fn bump_all(s: &'static Shared) {
    bump_slots(s, |_| true);
    s.seq.fetch_add(1, Ordering::SeqCst);
}

/// The resource-release callback's part after the locks (src/generate/xact_callbacks.rs), after
/// the slot was cleared: wakes the waiters when the transaction wrote a waited table
/// ([`table_written`]), when it made ids (`made_ids`) and someone waits on the horizon, or
/// everyone when it finished a prepared transaction (whose hold and rows may be anywhere) or
/// asked to ([`hlculid_wake_waiters_at_commit`]), or is logical replication's apply (rows
/// replicated with ids made elsewhere). Without waiters: a fence and one atomic read.
pub fn transaction_ended(made_ids: bool, committed: bool) {
    let wrote = WROTE_WAITED_TABLE.swap(false, Ordering::Relaxed);
    let wrote_any = WROTE_FOR_SLOTLESS.swap(false, Ordering::Relaxed);
    let Some(s) = shared() else { return };
    let named = wake_named_tables(s, committed);
    // the slot's clearing (or the transaction's end in the proc array, which a group leader may
    // have done for it) before the counts' read (the Dekker pair in the module's note)
    fence(Ordering::SeqCst);
    if s.waiters.load(Ordering::Relaxed) == 0 && !wrote && !wrote_any && !named {
        return;
    }
    let everyone = committed
        && s.waiters.load(Ordering::Relaxed) > 0
        // SAFETY: a flag of the process, set at its start.
        && (unsafe { pg_sys::IsLogicalWorker() } || (!made_ids && finishing_prepared()));
    let horizon = wrote_any
        || (named && s.slotless.load(Ordering::SeqCst) > 0)
        || (made_ids && s.horizon_waiters.load(Ordering::SeqCst) > 0);
    if everyone {
        bump_all(s);
    } else if horizon {
        s.seq.fetch_add(1, Ordering::SeqCst);
    } else if !wrote && !named {
        return;
    }
    // SAFETY: the shared ConditionVariable, initialised at startup; any backend may broadcast.
    unsafe { pg_sys::ConditionVariableBroadcast(cv(s)) };
}

/// Wakes the waiters, if any: the cluster horizon's worker calls it when the horizon it keeps
/// moves (src/horizon/cluster_worker.rs), so a wait on a table Citus manages wakes on another
/// node's commit too, as soon as the cluster horizon passes it.
pub fn wake() {
    let Some(s) = shared() else { return };
    if s.waiters.load(Ordering::SeqCst) == 0 {
        return;
    }
    // the waiters in horizon mode, which every waiter on a table Citus manages is (it has no
    // table slot); those sleeping until their table is written here are left alone
    s.seq.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the shared ConditionVariable, initialised at startup; any backend may broadcast.
    unsafe { pg_sys::ConditionVariableBroadcast(cv(s)) };
}

/// This backend's registration among the waiters (for the exit backstop, which gives it back).
#[derive(Clone, Copy)]
struct Registration {
    /// Counted in `waiters`.
    counted: bool,
    /// Counted in `horizon_waiters`.
    horizon: bool,
    /// The table slot taken, if any (none: counted in `slotless` while counted at all).
    slot: Option<usize>,
    /// The exit backstop is registered (once per process).
    at_exit: bool,
}

static REGISTERED: BackendLocal<Registration> = BackendLocal::new(Registration {
    counted: false,
    horizon: false,
    slot: None,
    at_exit: false,
});

fn registration() -> Registration {
    // SAFETY: the backend's thread; a copy out.
    unsafe { REGISTERED.with(|r| *r) }
}

fn set_registration(f: impl FnOnce(&mut Registration)) {
    // SAFETY: the backend's thread; the closure does not reach REGISTERED again.
    unsafe { REGISTERED.with(f) }
}

/// This backend's place among the waiters, given back when dropped: also when a check raises
/// (pgrx unwinds through here), and at exit (FATAL exits without unwinding).
struct Waiting(&'static Shared);

impl Waiting {
    /// Registers a waiter in horizon mode, with `table` in a slot when it is given and one is
    /// free (a waiter without a slot stays in horizon mode).
    fn start(s: &'static Shared, table: Option<pg_sys::Oid>) -> Self {
        if registration().counted {
            UserError::new(
                Condition::WaitInsideWait,
                "hlculid_wait cannot be called inside another wait's check",
            )
            .detail("A row-level security policy or a view that the waiting check reads called a wait again.")
            .hint("Call hlculid_wait and hlculid_consumer_wait from the client or a procedure, not from a policy or a view.")
            .raise()
        }
        if !registration().at_exit {
            // SAFETY: a callback for the life of the process; it only gives the counts back.
            unsafe { pg_sys::on_shmem_exit(Some(on_exit), pg_sys::Datum::from(0)) };
            set_registration(|r| r.at_exit = true);
        }
        // the table before the counts: a writer that sees the count sees the table
        let slot = table.and_then(|oid| {
            // SAFETY: a backend global, set once at connection.
            let key = table_key(unsafe { pg_sys::MyDatabaseId }, oid);
            let i = s.tables.iter().position(|t| {
                t.key
                    .compare_exchange(0, key, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            })?;
            s.used.fetch_max(i as u32 + 1, Ordering::SeqCst);
            Some(i)
        });
        set_registration(|r| r.slot = slot);
        if slot.is_none() {
            s.slotless.fetch_add(1, Ordering::SeqCst);
        }
        s.horizon_waiters.fetch_add(1, Ordering::SeqCst);
        set_registration(|r| r.horizon = true);
        s.waiters.fetch_add(1, Ordering::SeqCst);
        set_registration(|r| r.counted = true);
        Waiting(s)
    }

    /// Horizon mode on (before every check) or off (after a check found no row at all after
    /// the position; only with a table slot, whose writers wake it).
    fn horizon_mode(&self, on: bool) {
        let r = registration();
        if r.horizon == on || (!on && r.slot.is_none()) {
            return;
        }
        if on {
            self.0.horizon_waiters.fetch_add(1, Ordering::SeqCst);
        } else {
            self.0.horizon_waiters.fetch_sub(1, Ordering::SeqCst);
        }
        set_registration(|r| r.horizon = on);
    }

    /// The numbers that a broadcast meant for this waiter bumps: (horizon, its table's; without
    /// a table slot, the horizon's again: every wake may have brought rows then).
    fn seen(&self) -> (u64, u64) {
        let horizon = self.0.seq.load(Ordering::SeqCst);
        let table = registration()
            .slot
            .map_or(horizon, |i| self.0.tables[i].seq.load(Ordering::SeqCst));
        (horizon, table)
    }

    /// Whether a broadcast since `seen` was meant for this waiter, in its mode.
    fn woken(&self, seen: (u64, u64)) -> bool {
        let r = registration();
        (r.horizon && self.0.seq.load(Ordering::SeqCst) != seen.0)
            || r.slot
                .is_some_and(|i| self.0.tables[i].seq.load(Ordering::SeqCst) != seen.1)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        give_back(self.0);
    }
}

fn give_back(s: &'static Shared) {
    let r = registration();
    if r.counted {
        s.waiters.fetch_sub(1, Ordering::SeqCst);
    }
    if r.horizon {
        s.horizon_waiters.fetch_sub(1, Ordering::SeqCst);
    }
    if r.counted && r.slot.is_none() {
        s.slotless.fetch_sub(1, Ordering::SeqCst);
    }
    if let Some(i) = r.slot {
        s.tables[i].key.store(0, Ordering::SeqCst);
    }
    set_registration(|r| {
        r.counted = false;
        r.horizon = false;
        r.slot = None;
    });
}

unsafe extern "C-unwind" fn on_exit(_code: core::ffi::c_int, _arg: pg_sys::Datum) {
    if let Some(s) = shared() {
        give_back(s);
    }
}

/// What a check found: ready; or how long until something is due (a retry's time), and whether
/// rows after the position exist that the horizon still hides (or might: not known).
struct Found {
    ready: bool,
    due_in: Option<Duration>,
    hidden: bool,
}

/// Checks until `check` finds something or `timeout` passes, sleeping on the ConditionVariable
/// in between, at most `cap` at a time when given. `table`: the table whose writers wake this
/// waiter when its last check found no row after its position (None: every transaction that
/// made ids wakes it). `check` is given its table's number read before it (written since: bumped).
fn wait_loop(
    timeout: Duration,
    cap: Option<Duration>,
    table: Option<pg_sys::Oid>,
    mut check: impl FnMut(u64) -> Found,
) -> bool {
    let Some(s) = shared() else { not_preloaded() };
    let deadline = Instant::now() + timeout;
    let waiting = Waiting::start(s, table);
    loop {
        waiting.horizon_mode(true);
        let seen = waiting.seen();
        // the registration and the numbers before the check's reads (the Dekker pairs)
        fence(Ordering::SeqCst);
        let found = check(seen.1);
        if found.ready {
            return true;
        }
        if !found.hidden {
            waiting.horizon_mode(false);
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        let mut until = deadline;
        for d in [found.due_in, cap].into_iter().flatten() {
            until = until.min(now + d);
        }
        sleep(&waiting, seen, until);
    }
}

/// Sleeps until a broadcast after `seen` meant for this waiter, or `until`.
fn sleep(waiting: &Waiting, seen: (u64, u64), until: Instant) {
    let s = waiting.0;
    // SAFETY: the shared ConditionVariable; PostgreSQL's protocol: prepare, sleep in a loop that
    // re-checks the condition, cancel. An interrupt raises from inside the sleep (pgrx unwinds
    // it to the function's boundary); the transaction's abort cancels the sleep then.
    unsafe {
        pg_sys::ConditionVariablePrepareToSleep(cv(s));
        while !waiting.woken(seen) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let ms = left.as_millis().clamp(1, i32::MAX as u128) as core::ffi::c_long;
            if pg_sys::ConditionVariableTimedSleep(cv(s), ms, pg_sys::PG_WAIT_EXTENSION) {
                break;
            }
        }
        // Returns bool from PostgreSQL 16 (whether we were signalled), nothing on 15.
        #[allow(clippy::let_unit_value)]
        let _ = pg_sys::ConditionVariableCancelSleep();
    }
}

fn not_preloaded() -> ! {
    UserError::new(
        Condition::NotPreloaded,
        "hlculid_wait needs the hlculid library preloaded",
    )
    .detail("Waiters sleep on shared memory, which the library allocates when the server starts with it in shared_preload_libraries.")
    .hint("Add hlculid to shared_preload_libraries and restart the server.")
    .raise()
}

/// A timeout as a duration: NULL and negative ones are errors (a month counts 30 days, as
/// PostgreSQL compares intervals).
fn timeout_of(function: &str, timeout: Option<Interval>) -> Duration {
    let Some(t) = timeout else {
        UserError::new(
            Condition::NullArgument,
            format!("{function} cannot wait a NULL timeout"),
        )
        .hint("Pass an interval of 0 or more, such as '30 s'.")
        .raise()
    };
    let micros = i128::from(t.months()) * 30 * 86_400_000_000
        + i128::from(t.days()) * 86_400_000_000
        + i128::from(t.micros());
    if micros < 0 {
        UserError::new(
            Condition::InvalidParameter,
            format!("{function} cannot wait a negative timeout"),
        )
        .hint("Pass an interval of 0 or more, such as '30 s'.")
        .raise()
    }
    Duration::from_micros(micros.min(i128::from(i64::MAX)) as u64)
}

/// One argument of [`fresh_query`]: its type and value (NULL: `None`).
type Arg = (pg_sys::Oid, Option<pg_sys::Datum>);

/// SPI's three parallel arrays for `args`: types, values, and nulls (`'n'` for NULL, `' '` not).
fn spi_params(args: &[Arg]) -> (Vec<pg_sys::Oid>, Vec<pg_sys::Datum>, Vec<core::ffi::c_char>) {
    let types = args.iter().map(|a| a.0).collect();
    let values = args
        .iter()
        .map(|a| a.1.unwrap_or(pg_sys::Datum::from(0)))
        .collect();
    let nulls = args
        .iter()
        .map(|a| if a.1.is_some() { b' ' } else { b'n' } as core::ffi::c_char)
        .collect();
    (types, values, nulls)
}

/// The first row of a query: its first columns as by-value datums, its first column as text.
struct FirstRow {
    datums: Vec<Option<pg_sys::Datum>>,
    text: Option<String>,
}

/// Runs `sql` and returns its first row's first `ncols` by-value columns (and its first as text
/// when `text`), copied out before SPI_finish. `read_only` false: a new snapshot (READ COMMITTED
/// takes one per statement, and no transaction id is assigned for it).
fn first_row(sql: &CStr, args: &[Arg], read_only: bool, ncols: usize, text: bool) -> FirstRow {
    let (mut types, mut values, nulls) = spi_params(args);
    // SAFETY: SPI's protocol, within the function's call; the arrays live across the call; the
    // columns read are by-value or copied into Rust Strings before SPI_finish.
    unsafe {
        pg_sys::SPI_connect();
        let rc = pg_sys::SPI_execute_with_args(
            sql.as_ptr(),
            args.len() as _,
            types.as_mut_ptr(),
            values.as_mut_ptr(),
            nulls.as_ptr(),
            read_only,
            1,
        );
        let mut out = FirstRow {
            datums: vec![None; ncols],
            text: None,
        };
        let table = pg_sys::SPI_tuptable;
        if rc == pg_sys::SPI_OK_SELECT as i32 && !table.is_null() && pg_sys::SPI_processed > 0 {
            let tuple = *(*table).vals;
            for (i, slot) in out.datums.iter_mut().enumerate() {
                let mut isnull = false;
                let d = pg_sys::SPI_getbinval(tuple, (*table).tupdesc, (i + 1) as _, &mut isnull);
                *slot = (!isnull).then_some(d);
            }
            if text {
                let mut isnull = false;
                let d = pg_sys::SPI_getbinval(tuple, (*table).tupdesc, 1, &mut isnull);
                out.text = String::from_datum(d, isnull);
            }
        }
        pg_sys::SPI_finish();
        out
    }
}

/// Runs `sql` with a new snapshot and returns the first row's by-value columns.
fn fresh_query(sql: &CStr, args: &[Arg], ncols: usize) -> Vec<Option<pg_sys::Datum>> {
    first_row(sql, args, false, ncols, false).datums
}

/// The first row's first column as text: with a new snapshot as [`fresh_query`] when
/// `new_snapshot`, else read-only in the caller's.
fn query_text(sql: &CStr, args: &[Arg], new_snapshot: bool) -> Option<String> {
    first_row(sql, args, !new_snapshot, 0, true).text
}

/// A query that names a user's table, built (`build`, given the table's quoted, qualified name)
/// from the table's OID, and run only if, when parsed, every relation it names is the table (or
/// pg_catalog's, hlculid's): the readers' guard (src/base/read_guard.rs). A schema's owner who
/// renames the schema and puts a view of that name in its place would run her code as the
/// waiter otherwise. The name is looked up in the catalog caches at each run, and the query
/// built again when it changed (a rename moves it: the wait goes on with the table).
struct PinnedQuery {
    relation: pg_sys::Oid,
    name: String,
    sql: CString,
    build: Box<BuildQuery>,
}

/// Makes a [`PinnedQuery`]'s text from the table's quoted, qualified name.
type BuildQuery = dyn Fn(&str) -> Option<CString>;

impl PinnedQuery {
    /// `relation`'s query as `build` makes it (None: no such table now).
    fn new(
        relation: pg_sys::Oid,
        build: impl Fn(&str) -> Option<CString> + 'static,
    ) -> Option<Self> {
        let name = table_name(relation)?;
        let sql = build(&name)?;
        Some(PinnedQuery {
            relation,
            name,
            sql,
            build: Box::new(build),
        })
    }

    /// The first row, with a new snapshot.
    fn run(&mut self, args: &[Arg], ncols: usize, text: bool) -> FirstRow {
        // SAFETY: takes in other sessions' catalog changes, as any new lock would.
        unsafe { pg_sys::AcceptInvalidationMessages() };
        let name = table_name(self.relation);
        if name.as_deref() != Some(self.name.as_str()) {
            let Some(sql) = name.as_deref().and_then(|n| (self.build)(n)) else {
                UserError::new(
                    Condition::UndefinedTable,
                    "the table being waited on no longer exists",
                )
                .raise()
            };
            (self.name, self.sql) = (name.unwrap_or_default(), sql);
        }
        crate::base::read_guard::arm(self.relation, self.sql.clone());
        let (name, value) = crate::horizon::cluster::READ_OUTSIDE_BLOCKS;
        let row = crate::base::settings::with_setting(name, value, || {
            first_row(&self.sql, args, false, ncols, text)
        });
        crate::base::read_guard::disarm();
        row
    }
}

/// `name` quoted as PostgreSQL quotes an identifier.
fn quote_ident(name: &CStr) -> Option<String> {
    // SAFETY: a NUL-terminated string; PostgreSQL returns it or a palloc'd quoted copy, read at
    // once and freed (a wait checks many times in one memory context).
    unsafe {
        let quoted = pg_sys::quote_identifier(name.as_ptr());
        let out = CStr::from_ptr(quoted).to_str().ok().map(str::to_owned);
        if quoted != name.as_ptr() {
            pg_sys::pfree(quoted as *mut core::ffi::c_void);
        }
        out
    }
}

/// The relation's quoted, qualified name as the catalog caches have it (None: no such table).
fn table_name(relation: pg_sys::Oid) -> Option<String> {
    // SAFETY: lsyscache lookups by OID; each string is palloc'd (or NULL for none), read at once
    // and freed (a wait checks many times in one memory context).
    unsafe {
        let table = pg_sys::get_rel_name(relation);
        if table.is_null() {
            return None;
        }
        let schema = pg_sys::get_namespace_name(pg_sys::get_rel_namespace(relation));
        let name = if schema.is_null() {
            None
        } else {
            let name = quote_ident(CStr::from_ptr(schema))
                .zip(quote_ident(CStr::from_ptr(table)))
                .map(|(s, t)| format!("{s}.{t}"));
            pg_sys::pfree(schema as *mut core::ffi::c_void);
            name
        };
        pg_sys::pfree(table as *mut core::ffi::c_void);
        name
    }
}

/// The id column, quoted (None: a name with a NUL, which no column has).
fn quoted_column(id_column: &str) -> Option<String> {
    quote_ident(&CString::new(id_column).ok()?)
}

/// The table of row type `row_type` (None: none).
fn relation_of(row_type: pg_sys::Oid) -> Option<pg_sys::Oid> {
    let found = fresh_query(
        c"SELECT t.typrelid FROM pg_catalog.pg_type t \
          WHERE t.oid OPERATOR(pg_catalog.=) $1 AND t.typrelid OPERATOR(pg_catalog.<>) 0::pg_catalog.oid",
        &[(pg_sys::OIDOID, Some(pg_sys::Datum::from(row_type)))],
        1,
    );
    found[0].map(|d| pg_sys::Oid::from(d.value() as u32))
}

/// The cheap re-check on a table of this server: (rows after `$1` below the horizon `$2`, rows
/// after `$1` the horizon hides), the horizon taken in Rust before the query's new snapshot (the
/// two-statement rule).
fn fast_check_query(row_type: pg_sys::Oid, id_column: &str) -> Option<PinnedQuery> {
    let column = quoted_column(id_column)?;
    PinnedQuery::new(relation_of(row_type)?, move |table| {
        fast_check_sql(table, &column)
    })
}

fn fast_check_sql(table: &str, column: &str) -> Option<CString> {
    CString::new(format!(
        "SELECT EXISTS (SELECT FROM {table} t WHERE ($1 IS NULL OR t.{column} OPERATOR(pg_catalog.>) $1) \
         AND t.{column} OPERATOR(pg_catalog.<) $2), \
         EXISTS (SELECT FROM {table} t WHERE ($1 IS NULL OR t.{column} OPERATOR(pg_catalog.>) $1) \
         AND t.{column} OPERATOR(pg_catalog.>=) $2)"
    ))
    .ok()
}

/// The READ COMMITTED rule as `hlculid_read` raises it (0A000 naming it): the first thing the
/// waits' first check on a table Citus manages runs.
const READ_COMMITTED_AS_READ: &CStr =
    c"SELECT pg_catalog.hlculid_require_read_committed('hlculid_read')";

/// `hlculid_read(table_row, after, 1)`'s other checks on a table Citus manages (the cluster
/// horizon's errors, the table, its id column and the privileges), without its read of every
/// shard: `hlculid_read_below` with no bound reads nothing. `num_nulls` evaluates both of its
/// arguments.
const CITUS_CHECKS: &CStr = c"SELECT pg_catalog.num_nulls(pg_catalog.hlculid_cluster_horizon(), \
     (SELECT 1 FROM pg_catalog.hlculid_read_below($1, $2, NULL::pg_catalog.hlculid, 1) LIMIT 1))";

/// The same for a consumer's check (`$2`: the table's row type, `c`: the consumer's row): false,
/// once it raised what `hlculid_consume`'s read would.
const CONSUMER_CITUS_CHECKS: &str = "pg_catalog.num_nulls(pg_catalog.hlculid_cluster_horizon(), \
     (SELECT 1 FROM pg_catalog.hlculid_read_below($2, c.position, NULL::pg_catalog.hlculid, 1, c.id_column) LIMIT 1)) \
     OPERATOR(pg_catalog.<) 0";

/// The re-check on a table Citus manages (`$1`: the position): the first id after it, one
/// multi-shard `ORDER BY .. LIMIT 1` (as `hlculid_read`'s, with no upper bound).
fn first_after_query(row_type: pg_sys::Oid, id_column: &str) -> Option<PinnedQuery> {
    let column = quoted_column(id_column)?;
    PinnedQuery::new(relation_of(row_type)?, move |table| {
        first_after_sql(table, &column)
    })
}

fn first_after_sql(table: &str, column: &str) -> Option<CString> {
    CString::new(format!(
        "SELECT t.{column}::pg_catalog.text FROM {table} t \
         WHERE $1 IS NULL OR t.{column} OPERATOR(pg_catalog.>) $1 \
         ORDER BY t.{column} USING OPERATOR(pg_catalog.<) LIMIT 1"
    ))
    .ok()
}

/// What a waiter on a table Citus manages saw when it last read the table: nothing can have
/// become readable since, until some node commits a transaction that wrote anything (the
/// cluster horizon's worker's number moves; a consumer's position or retries changed are such
/// commits), the horizon passes the first row it saw above it, a retry falls due, or
/// [`CITUS_RECHECK`] passes (for what needs none of these: an id made long ago inserted late).
struct CitusSeen {
    commits: u64,
    first_above: Option<u128>,
    due: Option<Instant>,
    at: Instant,
}

/// What a check on a table Citus manages does next.
#[derive(Debug, PartialEq)]
enum CitusStep {
    /// A row is readable (the caller's read may still find it deleted, as after any check).
    Ready,
    /// Nothing can have become readable: asleep until then at most.
    Sleep(Instant),
    /// Read the table.
    Read,
}

impl CitusSeen {
    /// The step after `seen` (None: no read yet), with the published `horizon` and `commits`
    /// generation. `same_position()`, asked only when it decides: whether the position the
    /// last read was after still stands (a consumer's may have been moved by another session).
    fn step(
        seen: Option<&CitusSeen>,
        horizon: u128,
        commits: u64,
        now: Instant,
        same_position: impl FnOnce() -> bool,
    ) -> CitusStep {
        let Some(s) = seen else {
            return CitusStep::Read;
        };
        // the first row after the position, committed when the last read saw it above the
        // horizon, is below it now: readable without reading every shard again, if the
        // position still stands (another session may have taken that row: then read)
        if s.first_above.is_some_and(|m| m < horizon) {
            return if same_position() {
                CitusStep::Ready
            } else {
                CitusStep::Read
            };
        }
        let backstop = s.at + CITUS_RECHECK;
        if s.commits == commits && s.due.is_none_or(|d| now < d) && now < backstop {
            // until the backstop's time counted from the last read, not from this wake-up
            return CitusStep::Sleep(s.due.map_or(backstop, |d| d.min(backstop)));
        }
        CitusStep::Read
    }
}

/// A check on a table Citus manages: `check(horizon)` reads (with new snapshots, after the
/// horizon was taken: the two-statement rule) and gives what it found and the first id after
/// the position; skipped while nothing can have changed since `seen` ([`CitusSeen::step`]), so
/// an idle waiter costs no query and no node a task. `retries()`: what is ready without a
/// horizon (a consumer's retries that are due), checked when a retry fell due while the worker
/// publishes none.
fn citus_check(
    seen: &mut Option<CitusSeen>,
    same_position: impl FnOnce() -> bool,
    retries: impl FnOnce() -> Found,
    check: impl FnOnce(u128) -> (Found, Option<u128>),
) -> Found {
    let now = Instant::now();
    let not_ready = |until: Option<Instant>| Found {
        ready: false,
        // never a wait of 0 (the loop would spin): a time past is the loop's own cap
        due_in: until.filter(|d| *d > now).map(|d| d - now),
        hidden: true,
    };
    // None: no horizon a reader would be given now; the worker's next publication wakes us
    let Some((horizon, commits)) = crate::horizon::cluster_worker::for_waiter() else {
        let due = seen.as_ref().and_then(|s| s.due);
        // nothing read yet (no horizon since the wait began): its retries, at each wake-up
        if seen.is_none() || due.is_some_and(|d| d <= now) {
            let found = retries();
            if found.ready {
                return found;
            }
            let next = found.due_in.map(|d| now + d);
            if let Some(s) = seen.as_mut() {
                s.due = next;
            }
            return not_ready(next);
        }
        return not_ready(due);
    };
    match CitusSeen::step(seen.as_ref(), horizon, commits, now, same_position) {
        CitusStep::Ready => {
            return Found {
                ready: true,
                ..not_ready(None)
            }
        }
        CitusStep::Sleep(until) => return not_ready(Some(until)),
        CitusStep::Read => {}
    }
    let (found, first) = check(horizon);
    *seen = Some(CitusSeen {
        commits,
        first_above: first,
        due: found.due_in.map(|d| now + d),
        at: now,
    });
    Found {
        hidden: true,
        ..found
    }
}

/// [`first_after_query`]'s id, read with a new snapshot.
fn first_after(query: &mut PinnedQuery, after: Arg) -> Option<u128> {
    query
        .run(&[after], 0, true)
        .text
        .and_then(|t| t.parse::<hlculid_core::Id>().ok())
        .map(|id| id.to_u128())
}

fn hlculid_arg(id: Option<Hlculid>) -> Arg {
    (
        Hlculid::type_oid(),
        id.and_then(pgrx::datum::IntoDatum::into_datum),
    )
}

/// Whether Citus manages the table of row type `row_type`.
fn citus_table(row_type: pg_sys::Oid) -> bool {
    let found = fresh_query(
        c"SELECT pg_catalog.hlculid_citus_table(t.typrelid::pg_catalog.regclass) \
          FROM pg_catalog.pg_type t \
          WHERE t.oid OPERATOR(pg_catalog.=) $1 AND t.typrelid OPERATOR(pg_catalog.<>) 0::pg_catalog.oid",
        &[(pg_sys::OIDOID, Some(pg_sys::Datum::from(row_type)))],
        1,
    );
    found[0].is_some_and(|d| d.value() != 0)
}

/// SQL `hlculid_wait(table_row, after, timeout)`: true as soon as `hlculid_read(table_row,
/// after, 1)` would return a row, false at the timeout.
#[pg_extern(volatile)]
fn hlculid_wait(
    table_row: Option<pgrx::datum::AnyElement>,
    after: Option<Hlculid>,
    timeout: default!(Option<Interval>, "'30 s'"),
    fcinfo: pg_sys::FunctionCallInfo,
) -> bool {
    let _ = table_row;
    let timeout = timeout_of("hlculid_wait", timeout);
    // SAFETY: the call's own fcinfo, whose flinfo knows the argument's resolved type.
    let row_type = unsafe { pg_sys::get_fn_expr_argtype((*fcinfo).flinfo, 0) };
    let citus = citus_table(row_type);
    let cap = citus.then_some(CITUS_RECHECK);
    let table = (!citus).then(|| writers_wake(row_type)).flatten();
    let args = [(row_type, None), hlculid_arg(after)];
    // the first check is hlculid_read itself (its errors are ours; on a table Citus manages, its
    // checks without its read, then the Citus check); then, on a table of this server, the cheap
    // query, at once (whether rows are hidden decides how the waiter sleeps), and none at all
    // while neither the horizon moved nor the table was written (no row can have become
    // readable then)
    let full = || {
        fresh_query(
            c"SELECT EXISTS (SELECT FROM pg_catalog.hlculid_read($1, $2, 1))",
            &args,
            1,
        )[0]
        .is_some_and(|d| d.value() != 0)
    };
    let mut first = true;
    let mut fast: Option<(PinnedQuery, Option<u64>, u64, bool)> = None;
    let mut on_citus: Option<(PinnedQuery, Option<CitusSeen>)> = None;
    wait_loop(timeout, cap, table, |table_seen| {
        if std::mem::take(&mut first) {
            if citus {
                // what hlculid_read would raise, without its read: the Citus check reads next
                fresh_query(READ_COMMITTED_AS_READ, &[], 1);
                fresh_query(CITUS_CHECKS, &args, 1);
                on_citus = first_after_query(row_type, "id").map(|q| (q, None));
            } else {
                let ready = full();
                fast = fast_check_query(row_type, "id").map(|q| (q, None, table_seen, true));
                if ready || fast.is_none() {
                    return Found {
                        ready,
                        due_in: None,
                        hidden: true,
                    };
                }
            }
        }
        if let Some((query, seen)) = &mut on_citus {
            // the shortcut raises what the read would first (a privilege revoked since)
            let still = || {
                fresh_query(CITUS_CHECKS, &args, 1);
                true
            };
            let none = || Found {
                ready: false,
                due_in: None,
                hidden: true,
            };
            return citus_check(seen, still, none, |horizon| {
                let first = first_after(query, args[1]);
                let found = Found {
                    ready: first.is_some_and(|m| m < horizon),
                    due_in: None,
                    hidden: true,
                };
                (found, first)
            });
        }
        let Some((query, last, last_seen, hidden)) = &mut fast else {
            return Found {
                ready: full(),
                due_in: None,
                hidden: true,
            };
        };
        let h = crate::horizon::server::compute();
        if *last == Some(h) && table_seen == *last_seen {
            return Found {
                ready: false,
                due_in: None,
                hidden: *hidden,
            };
        }
        (*last, *last_seen) = (Some(h), table_seen);
        let found = query.run(&[args[1], horizon_at(h)], 2, false).datums;
        *hidden = found[1].is_none_or(|d| d.value() != 0);
        Found {
            ready: found[0].is_some_and(|d| d.value() != 0),
            due_in: None,
            hidden: *hidden,
        }
    })
}

/// The table of row type `row_type` when its writers are the ones that wake its waiters: a
/// plain table without children (rows inserted into a partition or an inheriting table directly
/// take no lock on the parent, and a view's rows come from other tables). None: horizon mode.
fn writers_wake(row_type: pg_sys::Oid) -> Option<pg_sys::Oid> {
    let found = fresh_query(
        c"SELECT c.oid, c.relkind OPERATOR(pg_catalog.=) 'r' AND NOT c.relhassubclass \
          FROM pg_catalog.pg_type t JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.typrelid \
          WHERE t.oid OPERATOR(pg_catalog.=) $1",
        &[(pg_sys::OIDOID, Some(pg_sys::Datum::from(row_type)))],
        2,
    );
    match (found[0], found[1]) {
        (Some(oid), Some(plain)) if plain.value() != 0 => {
            Some(pg_sys::Oid::from(oid.value() as u32))
        }
        _ => None,
    }
}

fn horizon_at(h: u64) -> Arg {
    hlculid_arg(Some(Hlculid(hlculid_core::Id::from_u128(
        u128::from(h) << 64,
    ))))
}

/// SQL `hlculid_consumer_wait(consumer, timeout)`: true as soon as `hlculid_consume` would
/// return a row (a retry that is due, or a row after the consumer's position below the
/// horizon), false at the timeout.
#[pg_extern(volatile)]
fn hlculid_consumer_wait(
    consumer: Option<&str>,
    timeout: default!(Option<Interval>, "'30 s'"),
) -> bool {
    let Some(consumer) = consumer else {
        UserError::new(
            Condition::NullArgument,
            "hlculid_consumer_wait needs a consumer name",
        )
        .raise()
    };
    let timeout = timeout_of("hlculid_consumer_wait", timeout);
    let name = pgrx::datum::IntoDatum::into_datum(consumer);
    let name_arg: Arg = (pg_sys::TEXTOID, name);
    let found = fresh_query(
        &CString::new(format!(
            "SELECT t.oid FROM hlculid.hlculid_consumer_positions c \
             JOIN pg_catalog.pg_type t ON t.typrelid OPERATOR(pg_catalog.=) c.relation::pg_catalog.oid \
             WHERE {MINE}"
        ))
        .unwrap_or_default(),
        std::slice::from_ref(&name_arg),
        1,
    );
    let Some(row_type) = found[0] else {
        UserError::new(
            Condition::UndefinedConsumer,
            format!("consumer \"{consumer}\" does not exist"),
        )
        .detail("Consumer names are per role: another role's consumer of that name is not the caller's.")
        .hint("hlculid_consume creates a consumer at its first call; hlculid_consumer_create at a chosen start.")
        .raise()
    };
    let row_type = pg_sys::Oid::from(row_type.value() as u32);
    // the consumer as it is now: one dropped and created again (another table, another start)
    // is not the one this wait checks, and reads as gone
    let mine = consumer_identity(name_arg, row_type);
    let mine = mine.as_str();
    let citus = citus_table(row_type);
    let cap = citus.then_some(CITUS_RECHECK);
    let args = [name_arg, (row_type, None)];
    // the first check reads through hlculid_read (its errors are ours; on a table Citus
    // manages, its checks without its read, then the Citus check); then, on a table of this
    // server, the same with the horizon taken here and the table read directly
    let mut fast: Option<PinnedQuery> = None;
    let mut on_citus: Option<(PinnedQuery, Option<CitusSeen>)> = None;
    let table = (!citus).then(|| writers_wake(row_type)).flatten();
    let mut first = true;
    // the position the last Citus read was after
    let read_after = std::cell::Cell::new(None);
    wait_loop(timeout, cap, table, |_| {
        if citus && std::mem::take(&mut first) {
            // the consumer and what its read would raise, without the read of every shard
            fresh_query(READ_COMMITTED_AS_READ, &[], 1);
            let found = consumer_found(
                &fresh_query(
                    &consumer_check(CONSUMER_CITUS_CHECKS, "true", mine),
                    &args,
                    4,
                ),
                consumer,
            );
            on_citus = consumer_column(&args[0], mine)
                .and_then(|column| first_after_query(row_type, &column))
                .map(|q| (q, None));
            if found.ready || on_citus.is_none() {
                return found;
            }
        }
        if let Some((query, seen)) = &mut on_citus {
            return citus_check(
                seen,
                || {
                    // what the read would raise (a privilege revoked since), then the position
                    let found = consumer_found(
                        &fresh_query(
                            &consumer_check(CONSUMER_CITUS_CHECKS, "true", mine),
                            &args,
                            4,
                        ),
                        consumer,
                    );
                    found.ready
                        || consumer_position(name_arg, mine)
                            .is_some_and(|p| Some(p) == read_after.get())
                },
                || consumer_retries(consumer, name_arg, mine),
                |horizon| {
                    let (found, after, first) =
                        consumer_on_citus(consumer, name_arg, mine, query, horizon);
                    read_after.set(after);
                    (found, first)
                },
            );
        }
        // the consumer's row read again each time (a reset moves it); gone: an error
        let found = match &mut fast {
            Some(query) => {
                query
                    .run(
                        &[args[0], horizon_at(crate::horizon::server::compute())],
                        4,
                        false,
                    )
                    .datums
            }
            None => {
                let found =
                    fresh_query(&consumer_check(CONSUMER_FULL_READ, "true", mine), &args, 4);
                if !citus {
                    fast = consumer_fast_read(row_type, &args[0], mine);
                }
                match &mut fast {
                    // not ready: the cheap query at once, to learn whether rows are hidden
                    Some(query) if found[1].is_none_or(|d| d.value() == 0) => {
                        query
                            .run(
                                &[args[0], horizon_at(crate::horizon::server::compute())],
                                4,
                                false,
                            )
                            .datums
                    }
                    _ => found,
                }
            }
        };
        consumer_found(&found, consumer)
    })
}

/// What a consumer's check found (see [`consumer_check`]); a consumer gone is an error.
fn consumer_found(found: &[Option<pg_sys::Datum>], consumer: &str) -> Found {
    if found[0].is_none_or(|d| d.value() == 0) {
        UserError::new(
            Condition::UndefinedConsumer,
            format!("consumer \"{consumer}\" does not exist"),
        )
        .detail("It was dropped while hlculid_consumer_wait waited on it.")
        .raise()
    }
    let due_in = found[2].map(|d| {
        // SAFETY: a float8 column, by value.
        let secs = unsafe { f64::from_datum(d, false) }.unwrap_or(0.0);
        Duration::from_secs_f64(secs.clamp(0.0, 1e9))
    });
    Found {
        ready: found[1].is_some_and(|d| d.value() != 0),
        due_in,
        hidden: found[3].is_none_or(|d| d.value() != 0),
    }
}

/// A consumer's check on a table Citus manages, below `horizon`: its row and retries (tables of
/// this server), then the first id after its position (`query`: [`first_after_query`]). Gives
/// what it found, the position it read after, and the first id after it.
fn consumer_on_citus(
    consumer: &str,
    name: Arg,
    mine: &str,
    query: &mut PinnedQuery,
    horizon: u128,
) -> (Found, Option<Option<u128>>, Option<u128>) {
    let found = consumer_retries(consumer, name, mine);
    if found.ready {
        return (found, None, None);
    }
    let position = consumer_position(name, mine);
    let first = first_after(
        query,
        hlculid_arg(
            position
                .flatten()
                .map(|p| Hlculid(hlculid_core::Id::from_u128(p))),
        ),
    );
    let ready = first.is_some_and(|m| m < horizon);
    (Found { ready, ..found }, position, first)
}

/// A consumer's check of its own tables only (it exists; a retry due, or when the next falls
/// due): what needs no read of its table and no horizon.
fn consumer_retries(consumer: &str, name: Arg, mine: &str) -> Found {
    consumer_found(
        &fresh_query(&consumer_check("false", "false", mine), &[name], 4),
        consumer,
    )
}

/// The calling role's consumer `name`'s position, with a new snapshot: None when there is no
/// such consumer, `Some(None)` at the start.
fn consumer_position(name: Arg, mine: &str) -> Option<Option<u128>> {
    query_text(
        &CString::new(format!(
            "SELECT COALESCE(c.position::pg_catalog.text, '') \
             FROM hlculid.hlculid_consumer_positions c WHERE {mine}"
        ))
        .unwrap_or_default(),
        &[name],
        true,
    )
    .map(|t| t.parse::<hlculid_core::Id>().ok().map(|id| id.to_u128()))
}

/// The calling role's consumer `$1` (`c`): names are per role, and a superuser (who bypasses
/// the tables' row-level security) sees only its own too.
const MINE: &str = "c.owner OPERATOR(pg_catalog.=) \
     pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)) \
     AND c.consumer OPERATOR(pg_catalog.=) $1";

/// The read of a consumer's check through `hlculid_read` (`$2`: the table's row type).
const CONSUMER_FULL_READ: &str =
    "EXISTS (SELECT FROM pg_catalog.hlculid_read($2, c.position, 1, c.id_column))";

/// A consumer's check: (it exists, a retry is due or `read` finds a row, seconds until the
/// next retry is due, `hidden`: rows after the position the horizon hides), `$1` its name,
/// `mine` the condition that finds it ([`consumer_identity`]).
fn consumer_check(read: &str, hidden: &str, mine: &str) -> CString {
    CString::new(format!(
        "SELECT c.consumer IS NOT NULL, \
            EXISTS (SELECT FROM hlculid.hlculid_consumer_retries r \
                    WHERE r.owner OPERATOR(pg_catalog.=) c.owner AND r.consumer OPERATOR(pg_catalog.=) $1 \
                      AND r.delivered_in IS NULL AND r.due_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()) \
            OR (CASE WHEN c.consumer IS NULL THEN false ELSE {read} END), \
            (SELECT pg_catalog.date_part('epoch'::pg_catalog.text, \
                     pg_catalog.min(r.due_at) OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp()) \
             FROM hlculid.hlculid_consumer_retries r \
             WHERE r.owner OPERATOR(pg_catalog.=) c.owner AND r.consumer OPERATOR(pg_catalog.=) $1 \
               AND r.delivered_in IS NULL), \
            {hidden} \
          FROM (SELECT) one LEFT JOIN hlculid.hlculid_consumer_positions c ON {mine}"
    ))
    .unwrap_or_default()
}

/// The condition on `c` that finds the calling role's consumer `$1` as it is now (its table
/// `row_type`'s, created when it was): [`MINE`], and its table and creation time once read.
fn consumer_identity(name: Arg, row_type: pg_sys::Oid) -> String {
    // as a number (seconds since 1970, exact to the microsecond): a timestamp's text follows
    // DateStyle, TimeZone and timezone_abbreviations, which a database's owner may set
    let created = query_text(
        &CString::new(format!(
            "SELECT EXTRACT(epoch FROM c.created_at)::pg_catalog.text \
             FROM hlculid.hlculid_consumer_positions c WHERE {MINE}"
        ))
        .unwrap_or_default(),
        &[name],
        true,
    );
    let mut mine = MINE.to_owned();
    if let Some(rel) = relation_of(row_type) {
        mine += &format!(
            " AND c.relation::pg_catalog.oid OPERATOR(pg_catalog.=) {}::pg_catalog.oid",
            rel.to_u32()
        );
    }
    // a numeric literal: digits, a point, a sign; anything else is not compared
    if let Some(created) = created.filter(|t| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
    }) {
        mine += &format!(
            " AND EXTRACT(epoch FROM c.created_at) OPERATOR(pg_catalog.=) ({created})::pg_catalog.numeric"
        );
    }
    mine
}

/// The calling role's consumer `name`'s id column.
fn consumer_column(name: &Arg, mine: &str) -> Option<String> {
    query_text(
        &CString::new(format!(
            "SELECT c.id_column::pg_catalog.text FROM hlculid.hlculid_consumer_positions c WHERE {mine}"
        ))
        .unwrap_or_default(),
        std::slice::from_ref(name),
        false,
    )
}

/// The direct reads of a consumer's check on a table of this server (`$2`: the horizon taken
/// before the query), with the consumer's id column as it is now: (rows below the horizon, rows
/// the horizon hides).
fn consumer_fast_read(row_type: pg_sys::Oid, name: &Arg, mine: &str) -> Option<PinnedQuery> {
    let column = quoted_column(&consumer_column(name, mine)?)?;
    let mine = mine.to_owned();
    PinnedQuery::new(relation_of(row_type)?, move |table| {
        let after = format!(
            "SELECT FROM {table} t WHERE (c.position IS NULL OR t.{column} OPERATOR(pg_catalog.>) c.position)"
        );
        Some(consumer_check(
            &format!("EXISTS ({after} AND t.{column} OPERATOR(pg_catalog.<) $2)"),
            &format!("EXISTS ({after} AND t.{column} OPERATOR(pg_catalog.>=) $2)"),
            &mine,
        ))
    })
}

#[cfg(test)]
mod unit {
    use super::{finishes_prepared, CitusSeen, CitusStep, CITUS_RECHECK};
    use std::cell::Cell;
    use std::time::{Duration, Instant};

    #[test]
    fn a_citus_waiter_reads_only_when_something_can_have_become_readable() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let seen = |first_above, due| CitusSeen {
            commits: 7,
            first_above,
            due,
            at: t0,
        };
        let asked = Cell::new(0);
        let stands = |answer: bool| {
            let asked = &asked;
            move || {
                asked.set(asked.get() + 1);
                answer
            }
        };
        // no read yet
        assert_eq!(
            CitusSeen::step(None, 10, 7, t0, stands(true)),
            CitusStep::Read
        );
        // nothing changed: asleep until the backstop counted from the last read
        let quiet = seen(None, None);
        assert_eq!(
            CitusSeen::step(Some(&quiet), 10, 7, ms(100), stands(true)),
            CitusStep::Sleep(t0 + CITUS_RECHECK)
        );
        // a row seen above the horizon, still above it: asleep too
        let above = seen(Some(50), None);
        assert_eq!(
            CitusSeen::step(Some(&above), 50, 7, ms(1), stands(true)),
            CitusStep::Sleep(t0 + CITUS_RECHECK)
        );
        assert_eq!(asked.get(), 0, "the position is asked only when it decides");
        // the horizon passed it: ready without a read, the position standing; read if it moved
        assert_eq!(
            CitusSeen::step(Some(&above), 51, 7, ms(1), stands(true)),
            CitusStep::Ready
        );
        assert_eq!(
            CitusSeen::step(Some(&above), 51, 7, ms(1), stands(false)),
            CitusStep::Read
        );
        assert_eq!(
            CitusSeen::step(Some(&above), 51, 8, ms(300), stands(false)),
            CitusStep::Read
        );
        assert_eq!(asked.get(), 3);
        // a node committed a write; the backstop passed
        assert_eq!(
            CitusSeen::step(Some(&quiet), 10, 8, ms(1), stands(true)),
            CitusStep::Read
        );
        assert_eq!(
            CitusSeen::step(Some(&quiet), 10, 7, t0 + CITUS_RECHECK, stands(true)),
            CitusStep::Read
        );
        // a retry falls due before the backstop: asleep until then, and read then
        let retry = seen(None, Some(ms(40)));
        assert_eq!(
            CitusSeen::step(Some(&retry), 10, 7, ms(1), stands(true)),
            CitusStep::Sleep(ms(40))
        );
        assert_eq!(
            CitusSeen::step(Some(&retry), 10, 7, ms(40), stands(true)),
            CitusStep::Read
        );
        assert_eq!(asked.get(), 3);
    }

    #[test]
    fn commit_and_rollback_prepared_are_told_from_other_statements() {
        for yes in [
            &b"COMMIT PREPARED 'x'"[..],
            b"rollback prepared 'citus_0_1_2_3'",
            b"  -- a comment\n /* one /* nested */ too */ Commit\n\tPrepared 'x';",
            b";; ;ROLLBACK PREPARED 'g'",
            b"/* \xe9t\xe9, not UTF-8 */ COMMIT PREPARED 'caf\xe9'",
            b"\x0bCOMMIT\x0bPREPARED 'g'",
            b"-- a comment ended by a carriage return\rCOMMIT PREPARED 'g'",
        ] {
            assert!(finishes_prepared(yes), "{yes:?}");
        }
        for no in [
            &b"COMMIT"[..],
            b"PREPARE TRANSACTION 'x'",
            b"SELECT 'COMMIT PREPARED'",
            b"-- COMMIT PREPARED 'x'",
            b"/* COMMIT PREPARED */ SELECT 1",
            b"COMMITPREPARED",
            b"",
            b"/* unterminated",
        ] {
            assert!(!finishes_prepared(no), "{no:?}");
        }
    }
}
