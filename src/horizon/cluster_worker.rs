//! The cluster horizon kept, not computed per call (0.6.0). A background worker on each Citus
//! node keeps one libpq connection to every active primary node and reads them in rounds; what
//! it found is in shared memory, and `hlculid_cluster_horizon()` reads it there.
//!
//! One round sends every node one query, two statements: first the distributed transactions
//! running there and the Citus prepared transactions left there, then its caught-up horizon, its
//! publisher id and its start time. Round `r + 1` is sent only once every node answered round
//! `r`, so the listings of round `r + 1` are taken after every horizon of round `r`: the order
//! 0.5.0's per-call function kept (a transaction that may still show an id below the horizons
//! was running when they were read, so it is in the listings that follow). Round `r`'s smallest
//! horizon becomes publishable once every transaction of round `r + 1`'s listings has been
//! missing from some later listing (the intersection 0.5.0 took); the newest such candidate is
//! published with the time its round began.
//!
//! A node that does not answer (down, unreachable, hlculid not preloaded there) fails the round:
//! nothing is published, the value stops where it was, and the node and its error are recorded,
//! which readers report once the value is older than their `max_wait`. The same rounds carry
//! every node's publisher id: two nodes sharing one are named in the log and in
//! `hlculid.hlculid_cluster_nodes`, and the node that started later refuses to make ids.
//!
//! Rounds run every `hlculid.cluster_horizon_interval` while readers ask (a reader's call marks
//! its demand and wakes the worker), once a second otherwise.

use crate::base::errors::{Condition, UserError};
use crate::base::pg_c::libpq;
use crate::base::settings;
use crate::types::datum::Hlculid;
use hlculid_core::Id;
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, SignalWakeFlags};
use pgrx::datum::Interval;
use pgrx::pg_sys::panic::CaughtError;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic, PgLwLock};
use std::cell::UnsafeCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const MAX_NODES: usize = 32;
const TEXT: usize = 240;
/// Rounds once a second while no reader asks.
const IDLE_ROUND: Duration = Duration::from_secs(1);
/// A reader's call keeps the worker in fast rounds this long.
const DEMAND_US: i64 = 2_000_000;
/// A round is current when it began at most this long before a reader's call.
const CURRENT_US: i64 = 50_000;
/// How long a node may take to answer a round before the round fails.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);
/// `hlculid_cluster_horizon()`'s default `max_wait`: older values are not given to readers.
const DEFAULT_MAX_WAIT_US: i64 = 10_000_000;
/// A node that failed is connected to again after this long.
const RECONNECT: Duration = Duration::from_millis(200);
/// Candidates kept while transactions are pending; more are dropped (later ones replace them).
const MAX_CANDIDATES: usize = 256;

/// A NUL-padded string in shared memory.
#[repr(C)]
#[derive(Copy, Clone)]
struct Text([u8; TEXT]);

impl Text {
    fn set(&mut self, s: &str) {
        self.0 = [0; TEXT];
        let mut n = s.len().min(TEXT - 1);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.0[..n].copy_from_slice(&s.as_bytes()[..n]);
    }

    fn get(&self) -> String {
        let n = self.0.iter().position(|&b| b == 0).unwrap_or(TEXT);
        String::from_utf8_lossy(&self.0[..n]).into_owned()
    }
}

/// What the worker knows of one node, for the view.
#[repr(C)]
#[derive(Copy, Clone)]
struct NodeRow {
    nodeid: i32,
    port: i32,
    /// -1 until the node answered.
    publisher: i32,
    /// The node's postmaster start time (0: unknown).
    started: i64,
    /// When the node last answered a round (0: never).
    answered: i64,
    /// The node sharing this node's publisher id (0: none).
    shares_with: i32,
    host: Text,
    error: Text,
}

/// The worker's findings, under an LWLock (readers take it shared).
#[repr(C)]
#[derive(Copy, Clone)]
pub struct State {
    /// The database the worker serves (InvalidOid: none yet).
    database: pg_sys::Oid,
    /// `Status` as u32.
    status: u32,
    /// The published horizon, valid when `as_of` is not 0.
    horizon: u128,
    /// When the round that read the published horizon began.
    as_of: i64,
    /// When the last round began, answered or not.
    last_round: i64,
    /// Moves when a round finds that some node committed a transaction that wrote anything
    /// since the round before (`hlculid_writing_commits()`), or could not tell: waiters on a
    /// table Citus manages read the table again only then, or when the horizon passes a row
    /// they saw above it.
    commits_seen: u64,
    /// The node whose failure stopped the last round (0: it did not fail), and why.
    problem_node: i32,
    problem: Text,
    /// Set on this node when an earlier-started node shares its publisher id: who, and how.
    refused: Text,
    /// This node's node id (0: not among the nodes).
    local_node: i32,
    n_nodes: u32,
    nodes: [NodeRow; MAX_NODES],
}

// SAFETY: plain integers and byte arrays, no pointers; valid in any process.
unsafe impl PGRXSharedMemory for State {}

impl Default for State {
    fn default() -> Self {
        // SAFETY: every field is an integer or a byte array, for which all-zeros is valid.
        unsafe { std::mem::zeroed() }
    }
}

#[repr(u32)]
#[derive(Copy, Clone, PartialEq, Eq)]
enum Status {
    NotStarted = 0,
    Running = 1,
    /// The worker's database has no Citus (or no hlculid).
    NoCitus = 2,
}

/// What readers and generators read without the lock.
#[repr(C)]
pub struct Signals {
    /// When a reader last asked (TimestampTz).
    demand: AtomicI64,
    /// The worker's latch (a pointer into shared memory), 0 without a worker.
    latch: AtomicUsize,
    /// 1 while this node refuses to make ids (a node that started earlier has its publisher id).
    refuse: AtomicU32,
    /// Broadcast after every round.
    cv: UnsafeCell<pg_sys::ConditionVariable>,
}

// SAFETY: atomics and a ConditionVariable (a spinlock and proc numbers), valid in any process;
// the cell is only handed to PostgreSQL's functions.
unsafe impl PGRXSharedMemory for Signals {}

impl Default for Signals {
    fn default() -> Self {
        let mut cv = std::mem::MaybeUninit::<pg_sys::ConditionVariable>::zeroed();
        // SAFETY: initialises the local in place; it is moved into shared memory before use.
        unsafe { pg_sys::ConditionVariableInit(cv.as_mut_ptr()) };
        Signals {
            demand: AtomicI64::new(0),
            latch: AtomicUsize::new(0),
            refuse: AtomicU32::new(0),
            // SAFETY: initialised just above.
            cv: UnsafeCell::new(unsafe { cv.assume_init() }),
        }
    }
}

// SAFETY: the names are unique to this extension's shared memory.
static STATE: PgLwLock<State> = unsafe { PgLwLock::new(c"hlculid_cluster_horizon") };
// SAFETY: as above.
static SIGNALS: PgAtomic<Signals> = unsafe { PgAtomic::new(c"hlculid_cluster_signals") };
static PRELOADED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets up the shared memory and registers the worker when Citus is preloaded too; `_PG_init`
/// calls it during `shared_preload_libraries` only.
#[allow(unexpected_cfgs)] // pg_shmem_init! expands to cfg(feature = "pg13"/"pg14") branches
pub fn init() {
    pg_shmem_init!(STATE);
    pg_shmem_init!(SIGNALS);
    PRELOADED.store(true, Ordering::Relaxed);
    if citus_preloaded() {
        crate::horizon::wait::count_commits();
        BackgroundWorkerBuilder::new("hlculid cluster horizon")
            .set_type("hlculid")
            .set_library("hlculid")
            .set_function("hlculid_cluster_horizon_main")
            .enable_spi_access()
            .set_restart_time(Some(Duration::from_secs(5)))
            .load();
    }
}

/// Whether `citus` is in `shared_preload_libraries` (read while preloading).
fn citus_preloaded() -> bool {
    // SAFETY: a lookup by a static name; the value is copied at once.
    let libs = unsafe {
        let p = pg_sys::GetConfigOption(c"shared_preload_libraries".as_ptr(), true, false);
        if p.is_null() {
            return false;
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    };
    libs.split(',')
        .any(|l| l.trim().trim_matches('"').rsplit('/').next() == Some("citus"))
}

/// libpq, which the worker loaded before its first connection (see `hlculid_cluster_horizon_main`).
fn lib() -> &'static libpq::Api {
    match libpq::api() {
        Ok(api) => api,
        Err(_) => stop(),
    }
}

fn signals() -> &'static Signals {
    SIGNALS.get()
}

fn now() -> i64 {
    // SAFETY: reads the system clock.
    unsafe { pg_sys::GetCurrentTimestamp() }
}

/// Whether this node refuses to make ids (a generator's fast path reads it; relaxed: the worker
/// sets it seconds after a conflict appears, one id more or less makes no difference).
#[inline]
pub fn refusing() -> bool {
    PRELOADED.load(Ordering::Relaxed) && signals().refuse.load(Ordering::Relaxed) != 0
}

/// The 55000 a generator raises on a node that refuses to make ids.
pub fn raise_refused() -> ! {
    let why = STATE.share().refused.get();
    let (publisher, _) = settings::publisher_shown();
    UserError::new(
        Condition::PublisherShared,
        format!("publisher id {publisher} is used by another node of the Citus cluster, so this node makes no ids"),
    )
    .detail("Two nodes with one publisher id can make the same id, and their ids do not say which node made them; the node that started later refuses.")
    .hint(format!("{why} Give each node its own hlculid.publisher_id in postgresql.conf, and restart the node."))
    .raise()
}

// ---------------------------------------------------------------------------------------------
// The worker

struct Node {
    nodeid: i32,
    groupid: i32,
    host: String,
    port: i32,
    conn: *mut libpq::PGconn,
    retry_at: Option<Instant>,
}

impl Node {
    fn disconnect(&mut self) {
        if !self.conn.is_null() {
            // SAFETY: a connection this worker opened and no longer uses.
            unsafe { (lib().PQfinish)(self.conn) };
            self.conn = std::ptr::null_mut();
        }
    }
}

/// What one node answered in a round.
struct Answer {
    pending: Vec<String>,
    hidden: i64,
    horizon: u128,
    publisher: i32,
    started: i64,
    /// The node's count of committed transactions that wrote anything.
    commits: i64,
}

struct Candidate {
    horizon: u128,
    as_of: i64,
    /// The transactions it waits for; None until the next round listed them.
    waits: Option<BTreeSet<String>>,
}

/// The round's query. Its first statement lists what is pending on the node, one item a row
/// (`hlculid_cluster_pending_here()`, sql/src/cluster.sql: the distributed transactions running
/// there and the Citus prepared transactions, keyed by distributed transaction number; NULL: a
/// transaction hidden from the worker's role); the second reads its horizon, publisher id, start
/// time (Unix microseconds) and count of writing commits. The third, once a horizon is
/// published, has the node observe it: every id it makes from then on is above it. A node
/// whose clock lags the others' (one added since, its clock behind by more than the horizon's
/// lag) would otherwise make ids below what readers already passed (the 0.6.0 review); one
/// further behind than its `hlculid.max_clock_skew` refuses (22023), and the horizon stops
/// with the node's error until its clock catches up.
fn round_sql(published: u128) -> CString {
    let observe = if published == 0 {
        String::new()
    } else {
        format!(
            "; SELECT pg_catalog.hlculid_observe('{}'::pg_catalog.hlculid)",
            Id::from_u128(published)
        )
    };
    CString::new(format!(
        "SELECT p.item FROM pg_catalog.hlculid_cluster_pending_here() p; \
         SELECT pg_catalog.hlculid_horizon_catch_up()::pg_catalog.text, c.publisher, \
                (pg_catalog.date_part('epoch', pg_catalog.pg_postmaster_start_time()) \
                 OPERATOR(pg_catalog.*) 1000000::pg_catalog.float8)::pg_catalog.int8, \
                pg_catalog.hlculid_writing_commits() \
           FROM pg_catalog.hlculid_clock() c{observe}"
    ))
    .unwrap_or_default()
}

/// Whether SIGTERM (or postmaster death) came: pgrx's flag is cleared when read, so it is kept
/// here once seen, wherever it was read first.
fn stopping() -> bool {
    static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if BackgroundWorker::sigterm_received() {
        STOPPING.store(true, Ordering::Relaxed);
    }
    STOPPING.load(Ordering::Relaxed)
}

#[allow(unreachable_code)] // proc_exit is `-> !` in some majors' bindings, `-> ()` in others
fn stop() -> ! {
    // SAFETY: ends this worker, as a FATAL would.
    unsafe { pg_sys::proc_exit(1) };
    unreachable!("proc_exit returned")
}

/// The worker: connected to `hlculid.cluster_horizon_database` as the bootstrap superuser.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn hlculid_cluster_horizon_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    let Some(database) = settings::cluster_horizon_database() else {
        // off: stay, so that the postmaster does not start it again every few seconds
        while BackgroundWorker::wait_latch(Some(Duration::from_secs(60))) {
            if BackgroundWorker::sighup_received() {
                reload_config();
                if settings::cluster_horizon_database().is_some() {
                    stop(); // restarted on the database now named
                }
            }
        }
        stop();
    };
    if let Err(e) = libpq::api() {
        log!("hlculid: the cluster horizon worker cannot use libpq: {e}");
        stop();
    }
    BackgroundWorker::connect_worker_to_spi(Some(&database), None);
    pin_session();
    let user = BackgroundWorker::transaction(|| {
        // SAFETY: a catalog lookup of this backend's own user, in a transaction; copied.
        unsafe {
            CStr::from_ptr(pg_sys::GetUserNameFromId(pg_sys::GetSessionUserId(), false))
                .to_string_lossy()
                .into_owned()
        }
    });
    {
        let mut s = STATE.exclusive();
        // SAFETY: this backend's database, set by the connection above.
        s.database = unsafe { pg_sys::MyDatabaseId };
        s.status = Status::NotStarted as u32;
    }
    // SAFETY: MyLatch points to this process's latch in shared memory for its whole life.
    signals()
        .latch
        .store(unsafe { pg_sys::MyLatch } as usize, Ordering::Release);
    log!("hlculid: keeping the cluster horizon in database \"{database}\"");
    let mut worker = Worker {
        database,
        user,
        nodes: Vec::new(),
        local_group: -1,
        candidates: VecDeque::new(),
        published: 0,
        commits: Vec::new(),
        listed_at: None,
        logged: None,
        conflicts_logged: BTreeSet::new(),
    };
    loop {
        let began = Instant::now();
        // the nodes again every second, and at once when a reader asks while there are none
        // (Citus or hlculid created since)
        let relist = if worker.nodes.is_empty() {
            Duration::from_millis(20)
        } else {
            IDLE_ROUND
        };
        if worker.listed_at.is_none_or(|t| t.elapsed() >= relist) {
            worker.list_nodes();
        }
        if !worker.nodes.is_empty() {
            worker.round();
        }
        // SAFETY: wakes readers waiting for a round; never raises.
        unsafe { pg_sys::ConditionVariableBroadcast(signals().cv.get()) };
        let active = now() - signals().demand.load(Ordering::Relaxed) < DEMAND_US;
        let period = if active && !worker.nodes.is_empty() {
            Duration::from_micros(settings::cluster_horizon_interval_us())
        } else {
            IDLE_ROUND
        };
        let wait = period.saturating_sub(began.elapsed());
        // less than the latch's unit (a millisecond) between fast rounds: slept as it is, since
        // rounding it up to 1 ms made the horizon's lag a round longer; a signal's flag is read
        // right after, and a latch set meanwhile stays set for the next wait
        let short = wait < Duration::from_millis(1);
        if short && !wait.is_zero() {
            std::thread::sleep(wait);
        }
        // wait_latch is false after SIGTERM (read and cleared) or postmaster death
        if (!short && !BackgroundWorker::wait_latch(Some(wait.max(Duration::from_millis(1)))))
            || stopping()
        {
            worker.shutdown();
            stop();
        }
        if BackgroundWorker::sighup_received() {
            reload_config();
            if settings::cluster_horizon_database().as_deref() != Some(worker.database.as_str()) {
                log!("hlculid: hlculid.cluster_horizon_database changed; the cluster horizon worker restarts");
                worker.shutdown();
                stop();
            }
            worker.listed_at = None;
        }
    }
}

fn reload_config() {
    // SAFETY: what a backend does on SIGHUP, in a process attached to shared memory.
    unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
}

/// The worker's own session runs as the bootstrap superuser in a database whose owner may own
/// `public` and may `ALTER DATABASE ... SET` any setting a user may set: only `pg_catalog` (then
/// `pg_temp`) is searched, and the role (the user it connects to the nodes as is read after
/// this), read-only transactions and timeouts are pinned, as the horizon publisher does
/// (src/horizon/publisher.rs). The connections to the nodes pin the same: [`SESSION_OPTIONS`].
fn pin_session() {
    for (name, value) in [
        (c"search_path", c"pg_catalog, pg_temp"),
        (c"role", c"none"),
        (c"default_transaction_read_only", c"off"),
        (c"default_transaction_isolation", c"read committed"),
        (c"statement_timeout", c"0"),
        (c"lock_timeout", c"0"),
        (c"idle_in_transaction_session_timeout", c"0"),
        (TRANSACTION_TIMEOUT.0, c"0"),
    ] {
        // SAFETY: sets a GUC by its C name and a fixed value (NUL-terminated statics) in a
        // connected backend; these values are valid on every major.
        unsafe {
            pg_sys::SetConfigOption(
                name.as_ptr(),
                value.as_ptr(),
                pg_sys::GucContext::PGC_SUSET,
                pg_sys::GucSource::PGC_S_SESSION,
            );
        }
    }
}

/// The settings every connection to a node pins in its startup packet (`options`), above what
/// the node's database owner set with `ALTER DATABASE ... SET` or `ALTER ROLE ... SET` (a
/// client's option wins over both): a `role` there would make the worker's queries run as that
/// role; read-only transactions or short timeouts would stop the rounds. Written as libpq
/// reads `options` inside a quoted conninfo value: a space in a value is `\\ `.
const SESSION_OPTIONS: &str = "-c search_path=pg_catalog,pg_temp -c role=none \
     -c default_transaction_read_only=off -c default_transaction_isolation=read\\\\ committed \
     -c statement_timeout=0 -c lock_timeout=0 -c idle_in_transaction_session_timeout=0";

/// `transaction_timeout` (17 and later; every node of a cluster runs the same major): the name
/// pinned in the worker's session (before 17 `statement_timeout` again) and the option.
#[cfg(any(feature = "pg17", feature = "pg18"))]
const TRANSACTION_TIMEOUT: (&CStr, &str) = (c"transaction_timeout", " -c transaction_timeout=0");
#[cfg(not(any(feature = "pg17", feature = "pg18")))]
const TRANSACTION_TIMEOUT: (&CStr, &str) = (c"statement_timeout", "");

struct Worker {
    database: String,
    user: String,
    nodes: Vec<Node>,
    local_group: i32,
    candidates: VecDeque<Candidate>,
    published: u128,
    /// Each node's (node id, start time, writing commits) in the last round that answered.
    commits: Vec<(i32, i64, i64)>,
    listed_at: Option<Instant>,
    /// The problem last logged, so that a repeating one is logged once.
    logged: Option<String>,
    conflicts_logged: BTreeSet<(i32, i32)>,
}

/// The nodes of `pg_dist_node` (active primaries) and this node's group, or why not.
type NodeList = Result<Option<(Vec<(i32, i32, String, i32)>, i32)>, String>;

impl Worker {
    fn shutdown(&mut self) {
        for n in &mut self.nodes {
            n.disconnect();
        }
        signals().latch.store(0, Ordering::Release);
    }

    /// Reads the active primary nodes from `pg_dist_node`; a changed list drops every candidate
    /// (one computed without a new node vouches for nothing there).
    fn list_nodes(&mut self) {
        self.listed_at = Some(Instant::now());
        let found: NodeList = in_transaction(|| {
            let citus = Spi::get_one::<bool>(
                "SELECT pg_catalog.to_regclass('pg_catalog.pg_dist_node') IS NOT NULL \
                    AND pg_catalog.to_regclass('pg_catalog.pg_dist_local_group') IS NOT NULL \
                    AND EXISTS (SELECT FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'hlculid')",
            )
            .ok()
            .flatten()
                == Some(true);
            if !citus {
                return None;
            }
            let group = Spi::get_one::<i32>("SELECT groupid FROM pg_catalog.pg_dist_local_group")
                .ok()
                .flatten()
                .unwrap_or(-1);
            let rows = Spi::connect(|client| {
                client
                    .select(
                        "SELECT nodeid, groupid, nodename::pg_catalog.text, nodeport FROM pg_catalog.pg_dist_node \
                         WHERE isactive AND noderole OPERATOR(pg_catalog.=) 'primary' ORDER BY nodeid",
                        None,
                        &[],
                    )
                    .map(|t| {
                        t.filter_map(|r| {
                            Some((
                                r.get::<i32>(1).ok()??,
                                r.get::<i32>(2).ok()??,
                                r.get::<String>(3).ok()??,
                                r.get::<i32>(4).ok()??,
                            ))
                        })
                        .collect::<Vec<_>>()
                    })
            })
            .unwrap_or_default();
            Some((rows, group))
        });
        let (rows, group) = match found {
            Ok(Some(found)) => found,
            Ok(None) | Err(_) => {
                if let Err(e) = found {
                    self.log_once(format!(
                        "hlculid: the cluster horizon worker cannot list the nodes: {e}"
                    ));
                }
                for n in &mut self.nodes {
                    n.disconnect();
                }
                self.nodes.clear();
                self.candidates.clear();
                let mut s = STATE.exclusive();
                s.status = Status::NoCitus as u32;
                s.n_nodes = 0;
                s.last_round = now(); // looked: a reader waiting for a current answer has it
                return;
            }
        };
        self.local_group = group;
        let same = rows.len() == self.nodes.len()
            && rows.iter().zip(&self.nodes).all(|((id, g, h, p), n)| {
                *id == n.nodeid && *g == n.groupid && *h == n.host && *p == n.port
            });
        if !same {
            for n in &mut self.nodes {
                n.disconnect();
            }
            self.nodes = rows
                .into_iter()
                .take(MAX_NODES)
                .map(|(nodeid, groupid, host, port)| Node {
                    nodeid,
                    groupid,
                    host,
                    port,
                    conn: std::ptr::null_mut(),
                    retry_at: None,
                })
                .collect();
            self.candidates.clear();
            let mut s = STATE.exclusive();
            s.n_nodes = self.nodes.len() as u32;
            s.local_node = self
                .nodes
                .iter()
                .find(|n| n.groupid == group)
                .map_or(0, |n| n.nodeid);
            for (row, n) in s.nodes.iter_mut().zip(&self.nodes) {
                // SAFETY: every field is an integer or a byte array.
                *row = unsafe { std::mem::zeroed() };
                row.nodeid = n.nodeid;
                row.port = n.port;
                row.publisher = -1;
                row.host.set(&n.host);
            }
        }
        STATE.exclusive().status = Status::Running as u32;
    }

    fn log_once(&mut self, line: String) {
        if self.logged.as_deref() != Some(line.as_str()) {
            log!("{line}");
            self.logged = Some(line);
        }
    }

    fn conninfo(&self, n: &Node) -> CString {
        // Citus' own options for its connections between nodes (sslmode and the like) first:
        // a value given twice is taken from its last occurrence, so ours below win.
        // SAFETY: a lookup by a static name; copied at once.
        let citus = unsafe {
            let p = pg_sys::GetConfigOption(c"citus.node_conninfo".as_ptr(), true, false);
            (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
        };
        let extra = settings::cluster_horizon_conninfo().unwrap_or_default();
        let s = format!(
            "{} {} host={} port={} dbname={} user={} connect_timeout=2 application_name='hlculid cluster horizon' options='{SESSION_OPTIONS}{}'",
            citus.unwrap_or_default(),
            extra,
            quote(&n.host),
            n.port,
            quote(&self.database),
            quote(&self.user),
            TRANSACTION_TIMEOUT.1,
        );
        CString::new(s.replace('\0', "")).unwrap_or_default()
    }

    /// One round: see the module's comment.
    fn round(&mut self) {
        let began = now();
        STATE.exclusive().last_round = began;
        let mut failed: Option<(usize, String)> = None;
        let sql = round_sql(self.published);
        // connect where needed, then send every node the query before reading any answer
        for i in 0..self.nodes.len() {
            if self.nodes[i].conn.is_null() {
                if self.nodes[i].retry_at.is_some_and(|t| Instant::now() < t) {
                    failed.get_or_insert((i, "not reachable; connecting again shortly".into()));
                    continue;
                }
                let info = self.conninfo(&self.nodes[i]);
                // SAFETY: a new connection from a NUL-terminated string; blocks at most
                // connect_timeout (2 s).
                let conn = unsafe { (lib().PQconnectdb)(info.as_ptr()) };
                // SAFETY: conn is a connection object (NULL only when out of memory).
                if conn.is_null() || unsafe { (lib().PQstatus)(conn) } != libpq::CONNECTION_OK {
                    let e = conn_error(conn);
                    if !conn.is_null() {
                        // SAFETY: the failed connection object is freed.
                        unsafe { (lib().PQfinish)(conn) };
                    }
                    self.nodes[i].retry_at = Some(Instant::now() + RECONNECT);
                    failed.get_or_insert((i, e));
                    continue;
                }
                self.nodes[i].conn = conn;
                self.nodes[i].retry_at = None;
            }
            // SAFETY: an open connection with no query in progress; a NUL-terminated query.
            if unsafe { (lib().PQsendQuery)(self.nodes[i].conn, sql.as_ptr()) } == 0 {
                let e = conn_error(self.nodes[i].conn);
                self.nodes[i].disconnect();
                failed.get_or_insert((i, e));
            }
        }
        let mut answers: Vec<Option<Answer>> = Vec::with_capacity(self.nodes.len());
        for i in 0..self.nodes.len() {
            if self.nodes[i].conn.is_null() {
                answers.push(None);
                continue;
            }
            match collect(self.nodes[i].conn) {
                Ok(a) => answers.push(Some(a)),
                Err(e) => {
                    self.nodes[i].disconnect();
                    self.nodes[i].retry_at = Some(Instant::now() + RECONNECT);
                    failed.get_or_insert((i, e));
                    answers.push(None);
                }
            }
        }
        let stamp = now();
        {
            let mut s = STATE.exclusive();
            for (row, a) in s.nodes.iter_mut().zip(&answers) {
                if let Some(a) = a {
                    row.publisher = a.publisher;
                    row.started = a.started;
                    row.answered = stamp;
                    row.error.set("");
                }
            }
            if let Some((i, e)) = &failed {
                s.nodes[*i].error.set(e);
            }
        }
        self.check_publishers();
        // commits anywhere since the last round (a node that did not answer: not known)
        let commits: Vec<(i32, i64, i64)> = self
            .nodes
            .iter()
            .zip(&answers)
            .map(|(n, a)| {
                a.as_ref()
                    .map_or((n.nodeid, 0, -1), |a| (n.nodeid, a.started, a.commits))
            })
            .collect();
        if failed.is_some() || commits != self.commits {
            STATE.exclusive().commits_seen += 1;
            // waiters whose gate this opens read now, not at the horizon's next move
            crate::horizon::wait::wake();
        }
        self.commits = commits;
        if let Some((i, e)) = failed {
            let node = self.nodes[i].nodeid;
            {
                let mut s = STATE.exclusive();
                s.problem_node = node;
                s.problem.set(&format!(
                    "{}:{}: {}",
                    self.nodes[i].host, self.nodes[i].port, e
                ));
            }
            self.log_once(format!(
                "hlculid: node {node} ({}:{}) did not answer, the cluster horizon stops until it does: {e}",
                self.nodes[i].host, self.nodes[i].port
            ));
            return;
        }
        let answers: Vec<Answer> = answers.into_iter().flatten().collect();
        if let Some(hidden) = answers.iter().map(|a| a.hidden).find(|&h| h > 0) {
            let mut s = STATE.exclusive();
            s.problem_node = self.nodes[0].nodeid;
            s.problem.set(&format!(
                "{hidden} distributed transactions are hidden from the worker's role"
            ));
            return;
        }
        if self.logged.take().is_some() {
            log!("hlculid: every node answers again; the cluster horizon moves");
        }
        let listed: BTreeSet<String> = answers
            .iter()
            .flat_map(|a| a.pending.iter().cloned())
            .collect();
        for c in &mut self.candidates {
            c.waits = Some(match c.waits.take() {
                None => listed.clone(),
                Some(w) => w.intersection(&listed).cloned().collect(),
            });
        }
        // the newest candidate nothing is pending for; it and every older one are done
        if let Some(ready) = self
            .candidates
            .iter()
            .rposition(|c| c.waits.as_ref().is_some_and(BTreeSet::is_empty))
        {
            let c = &self.candidates[ready];
            if c.horizon > self.published {
                self.published = c.horizon;
            }
            let (h, as_of) = (self.published, c.as_of);
            self.candidates.drain(..=ready);
            let moved = {
                let mut s = STATE.exclusive();
                let moved = s.horizon != h;
                s.horizon = h;
                s.as_of = as_of;
                moved
            };
            if moved {
                crate::horizon::wait::wake(); // hlculid_wait on a table Citus manages
            }
        }
        STATE.exclusive().problem_node = 0;
        let horizon = answers.iter().map(|a| a.horizon).min().unwrap_or(0);
        if self.candidates.len() >= MAX_CANDIDATES {
            self.candidates.pop_back();
        }
        self.candidates.push_back(Candidate {
            horizon,
            as_of: began,
            waits: None,
        });
    }

    /// Nodes sharing a publisher id: each is told of the other in the view; a new pair is
    /// logged; this node refuses to make ids when the other started earlier (or, started at the
    /// same time, has the lower node id).
    fn check_publishers(&mut self) {
        let mut s = STATE.exclusive();
        let n = s.n_nodes as usize;
        let mut by_publisher: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
        for (i, row) in s.nodes[..n].iter().enumerate() {
            if row.publisher >= 0 {
                by_publisher.entry(row.publisher).or_default().push(i);
            }
        }
        for row in &mut s.nodes[..n] {
            row.shares_with = 0;
        }
        let mut refuse: Option<String> = None;
        let mut pairs = BTreeSet::new();
        for (publisher, idx) in by_publisher.iter().filter(|(_, v)| v.len() > 1) {
            for &a in idx {
                for &b in idx {
                    if a == b {
                        continue;
                    }
                    let (ra, rb) = (s.nodes[a], s.nodes[b]);
                    s.nodes[a].shares_with = rb.nodeid;
                    pairs.insert((
                        ra.nodeid.min(rb.nodeid),
                        ra.nodeid.max(rb.nodeid),
                        *publisher,
                    ));
                    let a_later = (ra.started, ra.nodeid) > (rb.started, rb.nodeid);
                    if a_later
                        && self
                            .nodes
                            .get(a)
                            .is_some_and(|x| x.groupid == self.local_group)
                    {
                        refuse = Some(format!(
                            "Node {} ({}:{}) has publisher id {publisher} too and started first.",
                            rb.nodeid,
                            rb.host.get(),
                            rb.port
                        ));
                    }
                }
            }
        }
        match &refuse {
            Some(why) => s.refused.set(why),
            None => s.refused.set(""),
        }
        drop(s);
        signals()
            .refuse
            .store(u32::from(refuse.is_some()), Ordering::Relaxed);
        let now_pairs: BTreeSet<(i32, i32)> = pairs.iter().map(|&(a, b, _)| (a, b)).collect();
        for (a, b, publisher) in &pairs {
            if !self.conflicts_logged.contains(&(*a, *b)) {
                warning!(
                    "hlculid: nodes {a} and {b} of the Citus cluster have the same publisher id {publisher}; the one that started later makes no ids until one of them gets another (hlculid.publisher_id)"
                );
            }
        }
        self.conflicts_logged = now_pairs;
    }
}

/// Runs `f` in a transaction; an error is caught and returned as `SQLSTATE: message` after the
/// transaction is aborted, as the horizon publisher does (src/horizon/publisher.rs).
fn in_transaction<R>(
    f: impl FnOnce() -> R + std::panic::UnwindSafe + std::panic::RefUnwindSafe,
) -> Result<R, String> {
    // SAFETY: plain reads of this backend's interrupt holdoff counts.
    let held = unsafe {
        (
            pg_sys::InterruptHoldoffCount,
            pg_sys::QueryCancelHoldoffCount,
        )
    };
    PgTryBuilder::new(|| Ok(BackgroundWorker::transaction(f)))
        .catch_others(move |caught| {
            let report = match &caught {
                CaughtError::PostgresError(r)
                | CaughtError::ErrorReport(r)
                | CaughtError::RustPanic { ereport: r, .. } => r,
            };
            let error = report.message().replace('\n', " ");
            // SAFETY: as in horizon_publisher::attempt: pgrx caught the ERROR; the transaction
            // this worker started is aborted and the error state flushed.
            unsafe {
                pg_sys::InterruptHoldoffCount += 1;
                pg_sys::AbortCurrentTransaction();
                pg_sys::FlushErrorState();
                (
                    pg_sys::InterruptHoldoffCount,
                    pg_sys::QueryCancelHoldoffCount,
                ) = held;
            }
            Err(error)
        })
        .execute()
}

/// A conninfo value in single quotes.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn conn_error(conn: *const libpq::PGconn) -> String {
    if conn.is_null() {
        return "out of memory".into();
    }
    // SAFETY: the connection's own message, valid until its next call; copied.
    let m = unsafe { CStr::from_ptr((lib().PQerrorMessage)(conn)) };
    let m = m.to_string_lossy().trim().replace('\n', " ");
    if m.is_empty() {
        "connection lost".into()
    } else {
        m
    }
}

/// Reads the round's two results from a connection, waiting on its socket (and the latch) up to
/// [`ANSWER_TIMEOUT`].
fn collect(conn: *mut libpq::PGconn) -> Result<Answer, String> {
    let deadline = Instant::now() + ANSWER_TIMEOUT;
    let mut results: Vec<Vec<Vec<Option<String>>>> = Vec::new();
    let mut error: Option<String> = None;
    loop {
        // SAFETY: an open connection with a query sent.
        while unsafe { (lib().PQisBusy)(conn) } != 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no answer within {} s", ANSWER_TIMEOUT.as_secs()));
            }
            // SAFETY: waits on this process's latch and the connection's socket; a latch set by
            // a signal (SIGTERM, SIGHUP) is reset here and seen by the main loop's checks.
            unsafe {
                let rc = pg_sys::WaitLatchOrSocket(
                    pg_sys::MyLatch,
                    (pg_sys::WL_LATCH_SET
                        | pg_sys::WL_SOCKET_READABLE
                        | pg_sys::WL_TIMEOUT
                        | pg_sys::WL_EXIT_ON_PM_DEATH) as i32,
                    (lib().PQsocket)(conn),
                    left.as_millis().max(1) as core::ffi::c_long,
                    pg_sys::PG_WAIT_EXTENSION,
                );
                if rc & pg_sys::WL_LATCH_SET as i32 != 0 {
                    pg_sys::ResetLatch(pg_sys::MyLatch);
                    if stopping() {
                        return Err("the worker is stopping".into());
                    }
                }
                if (lib().PQconsumeInput)(conn) == 0 {
                    return Err(conn_error(conn));
                }
            }
        }
        // SAFETY: not busy: the next result is ready (or NULL at the end).
        let res = unsafe { (lib().PQgetResult)(conn) };
        if res.is_null() {
            break;
        }
        // SAFETY: a result of this connection, read then cleared.
        unsafe {
            match (lib().PQresultStatus)(res) {
                libpq::PGRES_TUPLES_OK => {
                    let rows = (0..(lib().PQntuples)(res))
                        .map(|r| {
                            (0..(lib().PQnfields)(res))
                                .map(|c| {
                                    ((lib().PQgetisnull)(res, r, c) == 0).then(|| {
                                        CStr::from_ptr((lib().PQgetvalue)(res, r, c))
                                            .to_string_lossy()
                                            .into_owned()
                                    })
                                })
                                .collect()
                        })
                        .collect();
                    results.push(rows);
                }
                _ => {
                    let m = CStr::from_ptr((lib().PQresultErrorMessage)(res))
                        .to_string_lossy()
                        .trim()
                        .replace('\n', " ");
                    error.get_or_insert(m);
                }
            }
            (lib().PQclear)(res);
        }
    }
    if let Some(e) = error {
        return Err(e);
    }
    let field = |set: usize, col: usize| -> Option<&String> {
        results
            .get(set)
            .and_then(|rows| rows.first())
            .and_then(|row| row.get(col))
            .and_then(Option::as_ref)
    };
    let bad = || "an answer the worker does not understand".to_string();
    // one item a row, a distributed transaction's number; NULL: a hidden transaction
    let items = results.first().ok_or_else(bad)?;
    let hidden = items
        .iter()
        .filter(|row| row.first().is_none_or(Option::is_none))
        .count() as i64;
    let pending: Vec<String> = items
        .iter()
        .filter_map(|row| row.first().cloned().flatten())
        .collect();
    let horizon_text = field(1, 0).ok_or_else(bad)?;
    let horizon = horizon_text.parse::<Id>().map_err(|_| bad())?.to_u128();
    let publisher = field(1, 1).and_then(|v| v.parse().ok()).ok_or_else(bad)?;
    // microseconds as an integer: a float's text follows extra_float_digits, which a database
    // owner may set for the worker's connections (rounded start times broke the publisher
    // check's tie: the 0.6.0 review)
    let started = field(1, 2)
        .and_then(|v| v.parse::<i64>().ok())
        .map(|us| us - 946_684_800_000_000) // to PostgreSQL's epoch, 2000-01-01
        .ok_or_else(bad)?;
    let commits = field(1, 3).and_then(|v| v.parse().ok()).ok_or_else(bad)?;
    Ok(Answer {
        pending,
        hidden,
        horizon,
        publisher,
        started,
        commits,
    })
}

// ---------------------------------------------------------------------------------------------
// The readers

fn check_citus(function: &str) {
    // SAFETY: a catalog lookup by a static name, in the caller's transaction.
    if unsafe { pg_sys::get_extension_oid(c"citus".as_ptr(), true) } == pg_sys::InvalidOid {
        UserError::new(Condition::CitusMissing, format!("{function} needs Citus"))
            .hint("On a server without Citus, read below hlculid_horizon().")
            .raise();
    }
    if !PRELOADED.load(Ordering::Relaxed) {
        UserError::new(
            Condition::NotPreloaded,
            format!("{function} needs the hlculid library preloaded"),
        )
        .hint("Add hlculid to shared_preload_libraries (after citus) and restart the server.")
        .raise();
    }
}

/// The state's checks that hold for every reader: the worker serves this database, and no two
/// nodes share a publisher id.
fn state_error(s: &State, function: &str) -> Option<UserError> {
    // SAFETY: this backend's database.
    let mine = unsafe { pg_sys::MyDatabaseId };
    if s.database != mine || s.status == Status::NoCitus as u32 {
        let served = settings::cluster_horizon_database();
        return Some(UserError::new(
            Condition::ClusterHorizonNotKept,
            format!("{function} is not kept for this database"),
        )
        .detail(match served {
            None => "hlculid.cluster_horizon_database is not set: no worker keeps the cluster horizon.".to_string(),
            Some(d) if s.database == mine => format!("The worker keeping it in database \"{d}\" finds no Citus cluster or no hlculid there."),
            Some(d) => format!("The worker keeping the cluster horizon serves database \"{d}\"."),
        })
        .hint("Set hlculid.cluster_horizon_database to the database that has Citus and hlculid, and reload the configuration."));
    }
    let n = s.n_nodes as usize;
    let mut shared: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for row in s.nodes[..n].iter().filter(|r| r.shares_with != 0) {
        shared.entry(row.publisher).or_default().push(row.nodeid);
    }
    if !shared.is_empty() {
        let list = shared
            .iter()
            .map(|(p, nodes)| {
                let nodes: Vec<String> = nodes.iter().map(i32::to_string).collect();
                format!("{p} (nodes {})", nodes.join(" and "))
            })
            .collect::<Vec<_>>()
            .join(", ");
        return Some(UserError::new(
            Condition::PublisherShared,
            format!("publisher id {list} is used by more than one node of the cluster"),
        )
        .detail("Two nodes with one publisher id can make the same id, and their ids do not say which node made them.")
        .hint("Give each node its own hlculid.publisher_id in postgresql.conf, and restart it (hlculid.hlculid_cluster_nodes names them)."));
    }
    None
}

/// Marks a reader's demand at `at`: the worker rounds fast for a while; after a quiet spell it
/// is woken at once.
fn demand(at: i64) {
    let sig = signals();
    if at - sig.demand.swap(at, Ordering::Relaxed) > CURRENT_US {
        let latch = sig.latch.load(Ordering::Acquire);
        if latch != 0 {
            // SAFETY: the worker's latch, in shared memory; setting a latch never raises.
            unsafe { pg_sys::SetLatch(latch as *mut pg_sys::Latch) };
        }
    }
}

/// For a waiter on a table Citus manages (src/horizon/wait.rs): the published horizon, when it
/// is one `hlculid_cluster_horizon()` would return (kept for this database, at most 10 s old),
/// and the number that moves with commits anywhere; marks the demand that keeps rounds fast.
/// None: no such value now (the reader's own call would wait, return NULL, or raise).
pub fn for_waiter() -> Option<(u128, u64)> {
    if !PRELOADED.load(Ordering::Relaxed) {
        return None;
    }
    let t = now();
    demand(t);
    let s = STATE.share();
    // SAFETY: this backend's database.
    let mine = unsafe { pg_sys::MyDatabaseId };
    // the newest value, however long rounds take (a slow node): a waiter is woken at every
    // publication, and reads again then
    let fresh = s.as_of != 0 && t - s.as_of <= DEFAULT_MAX_WAIT_US;
    (s.database == mine
        && s.status == Status::Running as u32
        && fresh
        && state_error(&s, "").is_none())
    .then_some((s.horizon, s.commits_seen))
}

fn interval_us(i: &Interval) -> i128 {
    i.as_micros()
}

/// SQL `hlculid_cluster_horizon(max_wait)`: see docs/citus.md.
#[pg_extern(volatile, parallel_unsafe)]
fn hlculid_cluster_horizon(max_wait: default!(Option<Interval>, "'10 s'")) -> Option<Hlculid> {
    const F: &str = "hlculid_cluster_horizon()";
    // the one READ COMMITTED rule of the horizon, watermark and readers
    crate::horizon::read_committed::require(Some("hlculid_cluster_horizon"));
    check_citus(F);
    let max_wait = match max_wait.as_ref().map(interval_us) {
        Some(us) if us >= 0 => us.min(i128::from(i64::MAX)) as i64,
        _ => UserError::new(
            Condition::InvalidParameter,
            format!(
                "hlculid_cluster_horizon cannot wait {}",
                max_wait.map_or("NULL".to_string(), |i| i.to_string())
            ),
        )
        .hint("max_wait is an interval of 0 or more.")
        .raise(),
    };
    let start = now();
    demand(start);
    let mut slept = false;
    let result = loop {
        let s = STATE.share();
        let current = s.last_round >= start - CURRENT_US;
        if current
            || s.status != Status::NoCitus as u32
            || now() - start >= max_wait.max(CURRENT_US)
        {
            if let Some(e) = state_error(&s, F) {
                drop(s);
                if slept {
                    // SAFETY: leaves the condition variable's wait list.
                    unsafe { pg_sys::ConditionVariableCancelSleep() };
                }
                e.raise();
            }
        }
        let t = now();
        if current || t - start >= max_wait {
            if s.as_of != 0 && t - s.as_of <= max_wait {
                break Some(Hlculid(Id::from_u128(s.horizon)));
            }
            if s.problem_node != 0 {
                let (node, problem) = (s.problem_node, s.problem.get());
                drop(s);
                if slept {
                    // SAFETY: leaves the condition variable's wait list.
                    unsafe { pg_sys::ConditionVariableCancelSleep() };
                }
                UserError::new(
                    Condition::NodeUnreachable,
                    "hlculid_cluster_horizon() could not read the horizon of every node",
                )
                .detail(format!("{node}: {problem}"))
                .hint("The cluster horizon needs every node: an unreachable one may still show ids below it.")
                .raise();
            }
            if current || s.last_round == 0 {
                break None;
            }
            // no round since the call began: the worker is not running
            drop(s);
            if slept {
                // SAFETY: as above.
                unsafe { pg_sys::ConditionVariableCancelSleep() };
            }
            UserError::new(Condition::ClusterHorizonNotKept, "hlculid_cluster_horizon() is not kept: its worker does not answer")
                .hint("The worker \"hlculid cluster horizon\" runs when citus and hlculid are in shared_preload_libraries; the server log says why it stopped.")
                .raise();
        }
        drop(s);
        let left = (max_wait - (t - start)).clamp(1_000, 10_000) / 1_000;
        // SAFETY: the condition variable is in shared memory; the first call prepares to sleep
        // (the loop checks again before sleeping, so no broadcast is lost), later ones sleep and
        // check for interrupts.
        unsafe {
            pg_sys::ConditionVariableTimedSleep(signals().cv.get(), left, pg_sys::PG_WAIT_EXTENSION)
        };
        slept = true;
    };
    if slept {
        // SAFETY: leaves the condition variable's wait list.
        unsafe { pg_sys::ConditionVariableCancelSleep() };
    }
    result
}

fn timestamp(us: i64) -> Option<TimestampWithTimeZone> {
    (us != 0)
        .then(|| TimestampWithTimeZone::try_from(pg_sys::TimestampTz::from(us)).ok())
        .flatten()
}

/// SQL `hlculid_cluster_nodes()`: what the worker knows of each node (the view
/// `hlculid.hlculid_cluster_nodes` shows it).
#[allow(clippy::type_complexity)] // the SQL row, spelled where pgrx reads it
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_cluster_nodes() -> TableIterator<
    'static,
    (
        name!(nodeid, i32),
        name!(nodename, String),
        name!(nodeport, i32),
        name!(publisher_id, Option<i32>),
        name!(started, Option<TimestampWithTimeZone>),
        name!(answered, Option<TimestampWithTimeZone>),
        name!(error, Option<String>),
        name!(shares_publisher_with, Option<i32>),
        name!(makes_ids, Option<bool>),
    ),
> {
    if !PRELOADED.load(Ordering::Relaxed) {
        return TableIterator::new(Vec::new());
    }
    let s = STATE.share();
    let refused = !s.refused.get().is_empty();
    let mut rows = Vec::new();
    // whether a node makes ids is known here for this node only: each node decides for itself
    for r in &s.nodes[..s.n_nodes as usize] {
        let error = r.error.get();
        rows.push((
            r.nodeid,
            r.host.get(),
            r.port,
            (r.publisher >= 0).then_some(r.publisher),
            timestamp(r.started),
            timestamp(r.answered),
            (!error.is_empty()).then_some(error),
            (r.shares_with != 0).then_some(r.shares_with),
            (r.nodeid == s.local_node).then_some(!refused),
        ));
    }
    TableIterator::new(rows)
}

extension_sql_file!(
    "../../sql/src/cluster_nodes.sql",
    name = "hlculid_cluster_nodes",
    requires = [
        "hlculid_horizons",
        hlculid_cluster_horizon,
        hlculid_cluster_nodes,
    ],
);
