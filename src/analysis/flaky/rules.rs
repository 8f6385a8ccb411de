//! The decision: signal rules (a table: pattern -> category, weight, explanation), derived
//! signals computed from several facts, and the scoring that picks one category.
//!
//! # Scoring
//!
//! * Every rule of [`RULES`] fires at most once per test (its first hit, the lowest line, is
//!   the evidence); a hit in the test's own body counts its full weight, a hit only in the
//!   context (setUp methods, helpers the test calls, fixtures) counts half (rounded up).
//! * A category's score is the sum of the weights of its fired rules. Seeding (`new
//!   Random(42)`, `random.seed(..)`, `setSeed`) in the test or its context cancels every
//!   randomness rule.
//! * The category with the highest score wins if that score reaches [`MIN_SCORE`]; ties are
//!   broken by [`PRIORITY`] (specific, rarely-accidental signals first). Below the threshold,
//!   no category (no hint). For tests known to be flaky the threshold is
//!   [`KNOWN_FLAKY_MIN_SCORE`]: the question is then which cause, not whether.

use super::facts::{Call, Facts};
use super::Category;
use std::collections::BTreeMap;

/// A category needs at least this score to be reported.
pub const MIN_SCORE: u32 = 3;

/// For tests known to be flaky (`FlakyOptions::known_flaky`): any signal names a cause.
pub const KNOWN_FLAKY_MIN_SCORE: u32 = 1;

/// Tie-break order: earlier wins.
pub const PRIORITY: [Category; 13] = [
    Category::TestCaseTimeout,
    Category::FloatingPoint,
    Category::Randomness,
    Category::UnorderedCollection,
    Category::PlatformDependency,
    Category::Network,
    Category::ResourceLeak,
    Category::Io,
    Category::Time,
    Category::Concurrency,
    Category::TestOrderDependency,
    Category::TooRestrictiveRange,
    Category::AsyncWait,
];

/// What a rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pat {
    /// A call: (receiver token or `""` for any receiver, name; a trailing `*` is a prefix).
    Call(&'static str, &'static str),
    /// An object creation of this simple type name (`*` suffix: prefix; `*` prefix: suffix).
    New(&'static str),
    /// An identifier token.
    Ident(&'static str),
    /// A string literal containing this text.
    Str(&'static str),
    /// An annotation or decorator on the test (or its class) whose text contains this.
    Ann(&'static str),
    /// The test's own name contains this word (case-insensitive): names state intent
    /// (`testConcurrentUpdates`, `shouldExpireAfterOneDay`).
    Name(&'static str),
    /// A signal computed from several facts (see [`Derived`]).
    Computed(Derived),
}

/// Signals that combine facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derived {
    /// A sleep call on a line before an assertion.
    SleepBeforeAssertion,
    /// A sleep inside a loop (polling).
    PollingLoop,
    /// An unseeded random source (`new Random()`, `Math.random()`, `random.random()`, ...).
    UnseededRandom,
    /// An equality assertion on a floating-point literal without a tolerance.
    FloatEquality,
    /// A hash-based collection (or JSON of one, or reflection order) and an assertion on an
    /// ordered rendering of it (string, list, first element).
    HashOrderAssertion,
    /// A write to static / module-level / class-level state from a test.
    SharedStaticWrite,
    /// Threads or executors together with shared mutable state written from them.
    ThreadsSharedState,
    /// JavaScript: a write to `process.env`.
    ProcessEnvWrite,
    /// JavaScript: a write to a property of `global`, `globalThis` or `window`.
    GlobalObjectWrite,
    /// A closeable resource created outside try-with-resources / `with` and never closed.
    UnclosedResource,
    /// A relational assertion with a numeric literal bound on a nondeterministic quantity
    /// (elapsed time, random values, counts under concurrency).
    TightBound,
    /// A fixed file-system path literal (`/tmp/x`, `target/out.txt`) used with file APIs.
    FixedPath,
    /// A setter/registrar called on a class (`Registry.setName(..)`, `Config.reset()`):
    /// process-wide static state.
    StaticMutatorCall,
    /// An assignment to a field declared outside the test (Java; shared if static).
    FieldWrite,
    /// A serialised multi-key JSON object compared as text (key order is unspecified).
    JsonTextComparison,
    /// An equality assertion between an element-by-element list literal (`asList(a, b, c)`,
    /// `List.of(..)`, `newArrayList(..)`) of at least three elements and a computed
    /// collection: the exact order is asserted.
    OrderedLiteralEquality,
    /// At least two distinct identifiers about clock time (`startTime`, `expiryDate`,
    /// `durationMillis`, ...), timeouts excluded.
    TimeVocabulary,
}

/// One row of the decision table.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub id: &'static str,
    pub category: Category,
    pub weight: u32,
    pub pat: Pat,
    pub why: &'static str,
}

const fn r(id: &'static str, category: Category, weight: u32, pat: Pat, why: &'static str) -> Rule {
    Rule {
        id,
        category,
        weight,
        pat,
        why,
    }
}

use Category as C;
use Derived as D;
use Pat::*;

/// The decision table. Weights: 5-8 a near-certain cause, 3-4 a strong signal, 1-2 a hint
/// that needs company to reach [`MIN_SCORE`].
#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // async wait
    r("sleep-thread", C::AsyncWait, 4, Call("Thread", "sleep"), "fixed sleep instead of waiting for a condition"),
    r("sleep-timeunit", C::AsyncWait, 4, Call("TimeUnit", "sleep"), "fixed sleep instead of waiting for a condition"),
    r("sleep-py", C::AsyncWait, 4, Call("time", "sleep"), "fixed sleep instead of waiting for a condition"),
    r("sleep-asyncio", C::AsyncWait, 3, Call("asyncio", "sleep"), "fixed sleep instead of waiting for a condition"),
    r("sleep-any", C::AsyncWait, 2, Call("", "sleep*"), "sleep call"),
    r("sleep-before-assert", C::AsyncWait, 2, Computed(D::SleepBeforeAssertion), "assertion runs after a fixed sleep, not after the awaited event"),
    r("polling-loop", C::AsyncWait, 2, Computed(D::PollingLoop), "polling loop with sleep"),
    r("await-timeout", C::AsyncWait, 3, Call("", "await"), "waits with a timeout for an asynchronous event"),
    r("wait-for", C::AsyncWait, 3, Call("", "waitFor*"), "waits for an asynchronous condition"),
    r("wait-until", C::AsyncWait, 3, Call("", "waitUntil*"), "waits for an asynchronous condition"),
    r("eventually", C::AsyncWait, 3, Call("", "assertEventually"), "eventual assertion on an asynchronous result"),
    r("awaitility", C::AsyncWait, 2, Ident("Awaitility"), "asynchronous condition"),
    r("object-wait", C::AsyncWait, 3, Call("", "wait"), "Object.wait on an asynchronous event"),
    r("future-get", C::AsyncWait, 1, Ident("Future"), "result of an asynchronous computation"),
    r("completable-future", C::AsyncWait, 1, Ident("CompletableFuture"), "asynchronous computation"),
    r("receive", C::AsyncWait, 3, Call("", "receive*"), "receives an asynchronously delivered message"),
    r("subscribe", C::AsyncWait, 1, Call("", "subscribe"), "asynchronous subscription"),
    r("publish", C::AsyncWait, 1, Call("", "publish"), "asynchronous publication"),
    r("poll", C::AsyncWait, 1, Call("", "poll"), "polls for an asynchronous result"),
    r("flush", C::AsyncWait, 1, Call("", "flush"), "asynchronous flush"),
    r("async-call", C::AsyncWait, 2, Call("", "*Async"), "asynchronous call"),
    r("callback", C::AsyncWait, 1, Ident("Callback"), "asynchronous callback"),
    r("listener", C::AsyncWait, 1, Call("", "add*Listener"), "result delivered to a listener asynchronously"),
    r("py-await", C::AsyncWait, 1, Ident("asyncio"), "asyncio"),
    r("js-set-timeout", C::AsyncWait, 4, Call("", "setTimeout"), "fixed delay (setTimeout) instead of waiting for a condition"),
    r("js-delay", C::AsyncWait, 2, Call("", "delay"), "fixed delay"),
    r("js-next-tick", C::AsyncWait, 1, Call("", "nextTick"), "waits one tick for an asynchronous result"),
    r("js-set-immediate", C::AsyncWait, 1, Call("", "setImmediate"), "waits one turn of the event loop for an asynchronous result"),
    r("js-done-callback", C::AsyncWait, 1, Call("", "done"), "test finished by a callback"),
    // concurrency
    r("new-thread", C::Concurrency, 4, New("Thread"), "starts a thread"),
    r("thread-start", C::Concurrency, 1, Call("", "start"), "starts a thread or service"),
    r("thread-join", C::Concurrency, 2, Call("", "join"), "joins threads"),
    r("executors", C::Concurrency, 4, Call("Executors", "new*"), "thread pool"),
    r("executor-service", C::Concurrency, 3, Ident("ExecutorService"), "thread pool"),
    r("executor-submit", C::Concurrency, 2, Call("", "submit"), "task submitted to an executor"),
    r("invoke-all", C::Concurrency, 3, Call("", "invokeAll"), "parallel tasks"),
    r("run-async", C::Concurrency, 2, Call("", "runAsync"), "parallel task"),
    r("supply-async", C::Concurrency, 2, Call("", "supplyAsync"), "parallel task"),
    r("atomic", C::Concurrency, 3, Ident("AtomicInteger"), "counter shared between threads"),
    r("atomic-long", C::Concurrency, 3, Ident("AtomicLong"), "counter shared between threads"),
    r("atomic-bool", C::Concurrency, 3, Ident("AtomicBoolean"), "flag shared between threads"),
    r("atomic-ref", C::Concurrency, 3, Ident("AtomicReference"), "reference shared between threads"),
    r("latch", C::Concurrency, 2, Ident("CountDownLatch"), "threads coordinated by a latch"),
    r("barrier", C::Concurrency, 3, Ident("CyclicBarrier"), "threads coordinated by a barrier"),
    r("semaphore", C::Concurrency, 3, Ident("Semaphore"), "threads coordinated by a semaphore"),
    r("lock", C::Concurrency, 3, Ident("ReentrantLock"), "explicit lock"),
    r("rwlock", C::Concurrency, 3, Ident("ReentrantReadWriteLock"), "explicit lock"),
    r("concurrent-map", C::Concurrency, 2, Ident("ConcurrentHashMap"), "map shared between threads"),
    r("parallel-stream", C::Concurrency, 3, Call("", "parallelStream"), "parallel stream"),
    r("parallel", C::Concurrency, 2, Call("", "parallel"), "parallel stream"),
    r("interrupt", C::Concurrency, 2, Call("", "interrupt"), "thread interruption"),
    r("current-thread", C::Concurrency, 2, Call("Thread", "currentThread"), "depends on the running thread"),
    r("fork-join", C::Concurrency, 3, Ident("ForkJoinPool"), "thread pool"),
    r("runnable", C::Concurrency, 1, Ident("Runnable"), "code run on another thread"),
    r("callable", C::Concurrency, 1, Ident("Callable"), "code run on another thread"),
    r("synchronized", C::Concurrency, 2, Ident("synchronized"), "synchronisation"),
    r("threads-shared-state", C::Concurrency, 3, Computed(D::ThreadsSharedState), "threads write shared mutable state"),
    r("py-thread", C::Concurrency, 4, Call("threading", "Thread"), "starts a thread"),
    r("py-thread-any", C::Concurrency, 3, Call("", "Thread"), "starts a thread"),
    r("py-pool", C::Concurrency, 4, Call("", "ThreadPoolExecutor"), "thread pool"),
    r("py-process-pool", C::Concurrency, 4, Call("", "ProcessPoolExecutor"), "process pool"),
    r("py-multiprocessing", C::Concurrency, 4, Ident("multiprocessing"), "parallel processes"),
    r("py-lock", C::Concurrency, 3, Call("threading", "Lock"), "explicit lock"),
    r("py-gather", C::Concurrency, 2, Call("asyncio", "gather"), "concurrent tasks"),
    r("js-worker", C::Concurrency, 4, New("Worker"), "starts a worker thread"),
    r("js-promise-race", C::Concurrency, 3, Call("Promise", "race"), "outcome decided by which promise settles first"),
    r("js-promise-all", C::Concurrency, 1, Call("Promise", "all"), "concurrent promises"),
    r("name-concurrent", C::Concurrency, 2, Name("concurren"), "the test is about concurrency"),
    r("name-race", C::Concurrency, 2, Name("race"), "the test is about a race"),
    r("name-parallel", C::Concurrency, 2, Name("parallel"), "the test is about parallelism"),
    r("name-thread", C::Concurrency, 2, Name("thread"), "the test is about threads"),
    r("name-deadlock", C::Concurrency, 2, Name("deadlock"), "the test is about deadlocks"),
    // randomness (cancelled by seeding)
    r("unseeded-random", C::Randomness, 5, Computed(D::UnseededRandom), "random values without a fixed seed"),
    r("uuid", C::Randomness, 2, Call("UUID", "randomUUID"), "random UUID"),
    r("py-uuid", C::Randomness, 2, Call("uuid", "uuid4"), "random UUID"),
    r("js-random-uuid", C::Randomness, 2, Call("crypto", "randomUUID"), "random UUID"),
    r("js-uuid-v4", C::Randomness, 2, Call("uuid", "v4"), "random UUID"),
    r("js-uuidv4", C::Randomness, 2, Call("", "uuidv4"), "random UUID"),
    r("js-random-bytes", C::Randomness, 2, Call("crypto", "randomBytes"), "random bytes"),
    r("js-faker", C::Randomness, 3, Ident("faker"), "random fake data"),
    r("shuffle", C::Randomness, 3, Call("", "shuffle"), "shuffled order"),
    r("random-ident", C::Randomness, 1, Ident("random"), "random value"),
    r("name-random", C::Randomness, 3, Name("random"), "the test is about random values"),
    // time
    r("current-millis", C::Time, 3, Call("System", "currentTimeMillis"), "reads the wall clock"),
    r("nano-time", C::Time, 2, Call("System", "nanoTime"), "reads the clock"),
    r("new-date", C::Time, 4, New("Date"), "current date"),
    r("now", C::Time, 4, Call("", "now"), "current date/time"),
    r("today", C::Time, 4, Call("", "today"), "current date"),
    r("utcnow", C::Time, 4, Call("", "utcnow"), "current date/time"),
    r("calendar", C::Time, 3, Call("Calendar", "getInstance"), "current date (calendar)"),
    r("timezone", C::Time, 3, Ident("TimeZone"), "time zone"),
    r("zone-id", C::Time, 3, Ident("ZoneId"), "time zone"),
    r("date-format", C::Time, 2, Ident("SimpleDateFormat"), "date formatting"),
    r("date-time", C::Time, 2, Ident("DateTime"), "date/time value"),
    r("local-date", C::Time, 2, Ident("LocalDate"), "date value"),
    r("local-date-time", C::Time, 2, Ident("LocalDateTime"), "date/time value"),
    r("instant", C::Time, 2, Ident("Instant"), "instant in time"),
    r("clock", C::Time, 2, Ident("Clock"), "clock"),
    r("timestamp", C::Time, 2, Ident("Timestamp"), "timestamp"),
    r("py-time", C::Time, 3, Call("time", "time"), "reads the wall clock"),
    r("py-datetime", C::Time, 2, Ident("datetime"), "date/time value"),
    r("js-process-hrtime", C::Time, 2, Call("process", "hrtime"), "reads the clock"),
    r("js-timezone-offset", C::Time, 3, Call("", "getTimezoneOffset"), "time zone"),
    r("js-locale-date", C::Time, 3, Call("", "toLocale*String"), "locale- and time-zone-dependent date text"),
    r("date-pattern", C::Time, 2, Str("yyyy"), "date format pattern"),
    r("time-vocabulary", C::Time, 2, Computed(D::TimeVocabulary), "computes with clock times or dates"),
    r("name-time", C::Time, 2, Name("time"), "the test is about time"),
    r("name-date", C::Time, 2, Name("date"), "the test is about dates"),
    r("name-expir", C::Time, 2, Name("expir"), "the test is about expiry"),
    // network
    r("socket", C::Network, 4, Ident("Socket"), "socket"),
    r("server-socket", C::Network, 4, Ident("ServerSocket"), "server socket on a port"),
    r("datagram", C::Network, 4, Ident("DatagramSocket"), "UDP socket"),
    r("inet-address", C::Network, 3, Ident("InetAddress"), "network address"),
    r("inet-socket-address", C::Network, 4, Ident("InetSocketAddress"), "network address and port"),
    r("url", C::Network, 3, New("URL"), "URL"),
    r("http-connection", C::Network, 4, Ident("HttpURLConnection"), "HTTP connection"),
    r("http-client", C::Network, 3, Ident("HttpClient"), "HTTP client"),
    r("localhost", C::Network, 3, Str("localhost"), "connects to a local server"),
    r("loopback", C::Network, 3, Str("127.0.0.1"), "connects to a local server"),
    r("http-url", C::Network, 3, Str("http://"), "HTTP endpoint"),
    r("https-url", C::Network, 3, Str("https://"), "HTTPS endpoint"),
    r("get-port", C::Network, 3, Call("", "getPort"), "port of a server"),
    r("get-local-port", C::Network, 3, Call("", "getLocalPort"), "port of a server"),
    r("free-port", C::Network, 3, Call("", "*FreePort"), "picks a port"),
    r("host-name", C::Network, 2, Call("", "getHostName"), "host name resolution"),
    r("connect", C::Network, 2, Call("", "connect"), "connects to a server"),
    r("port-ident", C::Network, 1, Ident("port"), "port"),
    r("name-connect", C::Network, 2, Name("connect"), "the test is about connections"),
    r("py-requests", C::Network, 4, Call("requests", "*"), "HTTP request"),
    r("py-urlopen", C::Network, 4, Call("", "urlopen"), "HTTP request"),
    r("py-socket", C::Network, 4, Call("socket", "socket"), "socket"),
    r("py-http-client", C::Network, 3, Ident("HTTPConnection"), "HTTP connection"),
    r("js-fetch", C::Network, 4, Call("", "fetch"), "HTTP request"),
    r("js-axios", C::Network, 4, Call("axios", "*"), "HTTP request"),
    r("js-http-get", C::Network, 4, Call("http", "get"), "HTTP request"),
    r("js-https-get", C::Network, 4, Call("https", "get"), "HTTPS request"),
    r("js-http-request", C::Network, 4, Call("http", "request"), "HTTP request"),
    r("js-net", C::Network, 4, Call("net", "*"), "socket"),
    r("js-websocket", C::Network, 4, New("WebSocket"), "WebSocket connection"),
    r("js-listen", C::Network, 3, Call("", "listen"), "starts a server on a port"),
    // io
    r("fixed-path", C::Io, 4, Computed(D::FixedPath), "fixed file-system path shared between runs"),
    r("file-output", C::Io, 2, New("FileOutputStream"), "writes a file"),
    r("file-writer", C::Io, 2, New("FileWriter"), "writes a file"),
    r("file-input", C::Io, 1, New("FileInputStream"), "reads a file"),
    r("random-access-file", C::Io, 2, New("RandomAccessFile"), "file access"),
    r("files-write", C::Io, 2, Call("Files", "write*"), "writes a file"),
    r("files-delete", C::Io, 2, Call("Files", "delete*"), "deletes a file"),
    r("mkdirs", C::Io, 2, Call("", "mkdir*"), "creates directories"),
    r("delete-on-exit", C::Io, 2, Call("", "deleteOnExit"), "file left until JVM exit"),
    r("list-files", C::Io, 1, Call("", "listFiles"), "lists a directory"),
    r("py-remove", C::Io, 2, Call("os", "remove"), "deletes a file"),
    r("py-rmtree", C::Io, 2, Call("shutil", "rmtree"), "deletes a directory"),
    r("py-makedirs", C::Io, 2, Call("os", "makedirs"), "creates directories"),
    r("py-chdir", C::Io, 3, Call("os", "chdir"), "changes the working directory"),
    // platform dependency
    r("file-separator", C::PlatformDependency, 4, Ident("separator"), "platform-specific path separator"),
    r("path-separator", C::PlatformDependency, 4, Ident("pathSeparator"), "platform-specific path separator"),
    r("line-separator", C::PlatformDependency, 4, Call("System", "lineSeparator"), "platform-specific line separator"),
    r("os-name", C::PlatformDependency, 4, Str("os.name"), "behaviour depends on the operating system"),
    r("line-separator-prop", C::PlatformDependency, 4, Str("line.separator"), "platform-specific line separator"),
    r("file-encoding", C::PlatformDependency, 4, Str("file.encoding"), "platform default encoding"),
    r("crlf", C::PlatformDependency, 3, Str("\\r\\n"), "Windows line ending in an expected value"),
    r("windows-path", C::PlatformDependency, 4, Str(":\\\\"), "Windows path"),
    r("default-charset", C::PlatformDependency, 3, Call("Charset", "defaultCharset"), "platform default charset"),
    r("locale", C::PlatformDependency, 2, Ident("Locale"), "locale-dependent formatting"),
    r("py-platform", C::PlatformDependency, 4, Call("platform", "*"), "behaviour depends on the platform"),
    r("py-sys-platform", C::PlatformDependency, 4, Ident("platform"), "behaviour depends on the platform"),
    r("py-os-sep", C::PlatformDependency, 4, Ident("sep"), "platform-specific path separator"),
    r("py-linesep", C::PlatformDependency, 4, Ident("linesep"), "platform-specific line separator"),
    r("py-locale", C::PlatformDependency, 3, Ident("locale"), "locale-dependent formatting"),
    // floating point
    r("float-equality", C::FloatingPoint, 6, Computed(D::FloatEquality), "floating-point equality without a tolerance"),
    // unordered collections
    r("hash-order-assertion", C::UnorderedCollection, 5, Computed(D::HashOrderAssertion), "asserts on the iteration order of a hash-based collection"),
    r("declared-members", C::UnorderedCollection, 4, Call("", "getDeclared*s"), "reflection returns members in no fixed order"),
    r("get-methods", C::UnorderedCollection, 3, Call("", "getMethods"), "reflection returns members in no fixed order"),
    r("hash-map", C::UnorderedCollection, 1, Ident("HashMap"), "hash-based map"),
    r("hash-set", C::UnorderedCollection, 1, Ident("HashSet"), "hash-based set"),
    r("key-set", C::UnorderedCollection, 1, Call("", "keySet"), "iterates a hash map's keys"),
    r("entry-set", C::UnorderedCollection, 1, Call("", "entrySet"), "iterates a hash map's entries"),
    r("json-string", C::UnorderedCollection, 2, Call("", "toJSONString"), "JSON text of a map"),
    r("json-mapper", C::UnorderedCollection, 2, Call("", "writeValueAsString"), "JSON text of an object"),
    r("json-text-comparison", C::UnorderedCollection, 4, Computed(D::JsonTextComparison), "compares JSON text whose key order is unspecified"),
    r("set-type", C::UnorderedCollection, 1, Ident("Set"), "set (unspecified iteration order)"),
    r("ordered-literal-equality", C::UnorderedCollection, 2, Computed(D::OrderedLiteralEquality), "asserts an exact element order on a computed collection"),
    r("reflected-annotations", C::UnorderedCollection, 3, Call("", "*Annotations"), "reflection returns annotations in no fixed order"),
    r("reflected-field-names", C::UnorderedCollection, 3, Call("", "getFieldNames"), "reflection returns fields in no fixed order"),
    r("js-object-keys", C::UnorderedCollection, 1, Call("Object", "keys"), "object keys (integer-like keys come first, in numeric order)"),
    r("js-object-entries", C::UnorderedCollection, 1, Call("Object", "entries"), "object entries (integer-like keys come first, in numeric order)"),
    r("js-readdir", C::UnorderedCollection, 4, Call("fs", "readdir*"), "directory listing order is not specified"),
    r("js-glob", C::UnorderedCollection, 3, Call("", "glob*"), "file matches in no specified order"),
    // test order dependency
    r("static-write", C::TestOrderDependency, 5, Computed(D::SharedStaticWrite), "writes static/global state that outlives the test"),
    r("set-property", C::TestOrderDependency, 4, Call("System", "setProperty"), "changes a JVM-wide system property"),
    r("clear-property", C::TestOrderDependency, 4, Call("System", "clearProperty"), "changes a JVM-wide system property"),
    r("set-default", C::TestOrderDependency, 4, Call("", "setDefault*"), "changes a process-wide default"),
    r("set-out", C::TestOrderDependency, 3, Call("System", "setOut"), "replaces a JVM-wide stream"),
    r("set-err", C::TestOrderDependency, 3, Call("System", "setErr"), "replaces a JVM-wide stream"),
    r("set-security-manager", C::TestOrderDependency, 3, Call("System", "setSecurityManager"), "replaces the JVM-wide security manager"),
    r("singleton", C::TestOrderDependency, 2, Call("", "getInstance"), "shared singleton"),
    r("instance-field", C::TestOrderDependency, 2, Ident("INSTANCE"), "shared singleton"),
    r("initial-context", C::TestOrderDependency, 4, Ident("InitialContext"), "JVM-wide naming registry"),
    r("naming-bind", C::TestOrderDependency, 2, Call("", "bind"), "registers in a shared registry"),
    r("naming-rebind", C::TestOrderDependency, 3, Call("", "rebind"), "registers in a shared registry"),
    r("naming-unbind", C::TestOrderDependency, 3, Call("", "unbind"), "removes from a shared registry"),
    r("lookup", C::TestOrderDependency, 2, Call("", "lookup"), "reads a shared registry"),
    r("register", C::TestOrderDependency, 2, Call("", "register*"), "registers in shared state"),
    r("static-mutator", C::TestOrderDependency, 4, Computed(D::StaticMutatorCall), "changes static state of a class, visible to later tests"),
    r("field-write", C::TestOrderDependency, 2, Computed(D::FieldWrite), "writes a field declared outside the test"),
    r("jndi-name", C::TestOrderDependency, 3, Ident("CompositeName"), "JNDI name in a shared naming context"),
    r("jndi-context", C::TestOrderDependency, 3, Ident("NamingContext"), "shared JNDI naming context"),
    r("order-annotation", C::TestOrderDependency, 4, Ann("Order"), "test order is declared significant"),
    r("py-environ", C::TestOrderDependency, 3, Ident("environ"), "process environment shared between tests"),
    r("py-sys-modules", C::TestOrderDependency, 3, Ident("modules"), "module registry shared between tests"),
    r("py-reload", C::TestOrderDependency, 3, Call("", "reload"), "module state shared between tests"),
    r("py-cache-clear", C::TestOrderDependency, 2, Call("", "cache_clear"), "cache shared between tests"),
    r("js-process-env", C::TestOrderDependency, 3, Computed(D::ProcessEnvWrite), "changes the process environment shared by later tests"),
    r("js-global-write", C::TestOrderDependency, 4, Computed(D::GlobalObjectWrite), "writes a property of the global object"),
    // test case timeout
    r("test-timeout", C::TestCaseTimeout, 8, Ann("timeout"), "test-level timeout"),
    r("testng-timeout", C::TestCaseTimeout, 8, Ann("timeOut"), "test-level timeout"),
    r("junit5-timeout", C::TestCaseTimeout, 8, Ann("Timeout"), "test-level timeout"),
    r("name-timeout", C::TestCaseTimeout, 1, Name("timeout"), "the test is about a timeout"),
    r("assert-timeout", C::TestCaseTimeout, 6, Call("", "assertTimeout*"), "assertion with a time limit"),
    r("js-jest-timeout", C::TestCaseTimeout, 6, Call("jest", "setTimeout"), "test-level timeout"),
    r("js-mocha-timeout", C::TestCaseTimeout, 6, Call("this", "timeout"), "test-level timeout"),
    r("timeout-rule", C::TestCaseTimeout, 5, New("Timeout"), "timeout rule"),
    // resource leak
    r("unclosed-resource", C::ResourceLeak, 4, Computed(D::UnclosedResource), "resource opened and never closed"),
    r("direct-memory", C::ResourceLeak, 3, Call("", "allocateDirect"), "off-heap memory"),
    r("allocate-memory", C::ResourceLeak, 3, Call("", "allocateMemory"), "off-heap memory"),
    // too restrictive range
    r("tight-bound", C::TooRestrictiveRange, 3, Computed(D::TightBound), "fixed numeric bound on a nondeterministic quantity"),
];

/// One fired rule.
#[derive(Debug, Clone)]
pub struct Hit {
    pub rule: &'static Rule,
    pub line: usize,
    /// Found only in the context (setUp, helper, fixture), not in the test body.
    pub context: bool,
}

/// Facts of a test: its own body, its context, its annotations, and shared state names.
#[derive(Debug, Clone, Default)]
pub struct TestFacts {
    pub own: Facts,
    pub context: Facts,
    /// Annotation/decorator texts with lines (the test's, then its class's).
    pub annotations: Vec<(String, usize)>,
    /// Names of static mutable fields (Java), module-level mutable variables and class-level
    /// mutable attributes (Python) of the file.
    pub shared_names: Vec<String>,
    /// Names of instance fields (fresh per test; writes to them are not shared state).
    pub instance_names: Vec<String>,
    /// The test's first line (for evidence on annotation-free derived signals).
    pub line: usize,
    /// The test's simple name.
    pub name: String,
    /// A JavaScript or TypeScript test.
    pub javascript: bool,
}

fn name_matches(pattern: &str, name: &str) -> bool {
    if pattern == "*" {
        return !name.is_empty();
    }
    if let Some(p) = pattern.strip_suffix("*s") {
        // `getDeclared*s`: prefix and plural suffix.
        return name.starts_with(p) && name.ends_with('s') && name.len() > p.len();
    }
    if let Some(p) = pattern.strip_suffix('*') {
        return name.starts_with(p);
    }
    if let Some(s) = pattern.strip_prefix('*') {
        return name.ends_with(s) && name.len() > s.len();
    }
    pattern == name
}

fn call_matches(recv: &str, name: &str, c: &Call) -> bool {
    name_matches(name, &c.name) && (recv.is_empty() || c.receiver.iter().any(|t| t == recv))
}

const SLEEP_NAMES: [&str; 6] = [
    "sleep",
    "sleepUninterruptibly",
    "sleepQuietly",
    "sleepFor",
    "setTimeout",
    "delay",
];

fn is_sleep(c: &Call) -> bool {
    SLEEP_NAMES.contains(&c.name.as_str())
}

/// Lines where a rule matches in one set of facts (sorted, first = evidence).
fn first_line(rule: &Rule, f: &Facts, t: &TestFacts, own: bool) -> Option<usize> {
    let min = |it: &mut dyn Iterator<Item = usize>| it.min();
    match rule.pat {
        Call(recv, name) => min(&mut f
            .calls
            .iter()
            // `performance.now()` measures elapsed time on a monotonic clock, not the date:
            // a bound on it is a too-restrictive range (`tight-bound`), not a time signal.
            .filter(|c| {
                call_matches(recv, name, c)
                    && !(rule.id == "now" && c.receiver.iter().any(|r| r == "performance"))
            })
            .map(|c| c.line)),
        New(ty) => min(&mut f
            .news
            .iter()
            .filter(|n| name_matches(ty, &n.ty))
            .map(|n| n.line)),
        Ident(id) => min(&mut f.idents.iter().filter(|(i, _)| i == id).map(|(_, l)| *l)),
        Str(s) => min(&mut f
            .strings
            .iter()
            .filter(|(t, _)| t.contains(s))
            .map(|(_, l)| *l)),
        Ann(a) => {
            if !own {
                return None;
            }
            min(&mut t
                .annotations
                .iter()
                .filter(|(text, _)| annotation_matches(a, text))
                .map(|(_, l)| *l))
        }
        Name(word) => {
            if !own {
                return None;
            }
            // "time" must not match inside "timeout" (a different category).
            let lower = t.name.to_ascii_lowercase();
            let lower = if word == "timeout" {
                lower
            } else {
                lower.replace("timeout", "")
            };
            lower.contains(word).then_some(t.line)
        }
        Computed(d) => derived(d, f, t, own),
    }
}

/// `Ann("timeout")` matches `@Test(timeout = 100)`; `Ann("Timeout")` matches `@Timeout(5)`
/// and `@pytest.mark.timeout(3)`; `Ann("Order")` matches `@Order`, `@FixMethodOrder`,
/// `@TestMethodOrder`.
fn annotation_matches(pat: &str, text: &str) -> bool {
    let name: String = text
        .trim_start_matches('@')
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    let simple = name.rsplit('.').next().unwrap_or("");
    match pat {
        "timeout" | "timeOut" => {
            let args = text.split_once('(').map(|(_, a)| a).unwrap_or("");
            (simple == "Test" && args.contains(pat))
                || (pat == "timeout" && simple == "timeout" && name.contains("mark"))
        }
        "Timeout" => simple == "Timeout" || simple == "timeout_decorator" || simple == "timed",
        "Order" => simple.ends_with("Order"),
        _ => simple == pat,
    }
}

fn derived(d: Derived, f: &Facts, t: &TestFacts, own: bool) -> Option<usize> {
    match d {
        D::SleepBeforeAssertion => {
            let last_assert = f.assertions.iter().map(|a| a.line).max()?;
            f.calls
                .iter()
                .filter(|c| is_sleep(c) && c.line <= last_assert)
                .map(|c| c.line)
                .min()
        }
        D::PollingLoop => f
            .calls
            .iter()
            .filter(|c| is_sleep(c) && c.in_loop)
            .map(|c| c.line)
            .min(),
        D::UnseededRandom => random_sources(f).into_iter().min(),
        D::FloatEquality => f
            .assertions
            .iter()
            .filter(|a| a.float_literal && a.equality && !a.tolerance && !a.relational)
            .filter(|a| {
                // assertEquals(double, double, delta) has a tolerance as its last argument.
                !(matches!(a.name.as_str(), "assertEquals" | "assertNotEquals") && a.nargs >= 3)
            })
            .map(|a| a.line)
            .min(),
        D::HashOrderAssertion => hash_order(f),
        D::SharedStaticWrite => shared_write(f, t),
        D::ThreadsSharedState => {
            let threads = f.news.iter().any(|n| n.ty == "Thread")
                || f.calls.iter().any(|c| {
                    matches!(
                        c.name.as_str(),
                        "submit" | "execute" | "invokeAll" | "runAsync" | "supplyAsync"
                    ) || (c.name == "Thread")
                });
            if !threads {
                return None;
            }
            let shared = f
                .idents
                .iter()
                .filter(|(i, _)| {
                    t.shared_names.iter().any(|s| s == i)
                        || matches!(
                            i.as_str(),
                            "ArrayList" | "HashMap" | "HashSet" | "LinkedList" | "StringBuilder"
                        )
                })
                .map(|(_, l)| *l)
                .min();
            shared.or_else(|| f.writes.first().map(|w| w.line))
        }
        D::UnclosedResource => unclosed(f, t),
        D::TightBound => tight_bound(f),
        D::ProcessEnvWrite => f
            .writes
            .iter()
            .filter(|w| w.tokens.len() >= 3 && w.tokens[0] == "process" && w.tokens[1] == "env")
            .map(|w| w.line)
            .min(),
        D::GlobalObjectWrite => f
            .writes
            .iter()
            .filter(|w| {
                w.tokens.len() >= 2
                    && matches!(w.tokens[0].as_str(), "global" | "globalThis" | "window")
            })
            .map(|w| w.line)
            .min(),
        D::FixedPath => fixed_path(f),
        D::StaticMutatorCall => f
            .calls
            .iter()
            .filter(|c| is_static_mutator(c))
            .map(|c| c.line)
            .min(),
        // setUp methods write fields by design: only the test's own writes count.
        D::FieldWrite if !own => None,
        D::FieldWrite => f
            .writes
            .iter()
            .filter(|w| {
                let single = w.tokens.len() == 1 || (w.tokens.len() == 2 && w.tokens[0] == "this");
                let name = w.tokens.last().map(String::as_str).unwrap_or("");
                single
                    && !name.is_empty()
                    && !f.locals.iter().any(|l| l == name)
                    && !t.instance_names.iter().any(|l| l == name)
            })
            .map(|w| w.line)
            .min(),
        D::TimeVocabulary => {
            let mut seen: Vec<&str> = Vec::new();
            let mut first = None;
            for (i, l) in &f.idents {
                let lower = i.to_ascii_lowercase();
                let timeish = [
                    "time",
                    "date",
                    "clock",
                    "millis",
                    "nanos",
                    "duration",
                    "expir",
                    "timestamp",
                    "hour",
                    "minute",
                ]
                .iter()
                .any(|w| lower.contains(w))
                    && !lower.contains("timeout");
                if timeish && !seen.contains(&i.as_str()) {
                    seen.push(i);
                    first = Some(first.map_or(*l, |f: usize| f.min(*l)));
                }
            }
            if seen.len() >= 2 {
                first
            } else {
                None
            }
        }
        D::OrderedLiteralEquality => f
            .assertions
            .iter()
            .filter(|a| a.equality && a.nargs >= 2 && !a.tolerance)
            .filter(|a| ordered_literal_against_computed(&a.text))
            // A test that sorts anything is taken to compare sorted collections.
            .filter(|_| {
                !f.calls
                    .iter()
                    .any(|c| c.name.to_ascii_lowercase().contains("sort"))
            })
            .map(|a| a.line)
            .min(),
        D::JsonTextComparison => {
            let json_vars: Vec<&str> = f
                .strings
                .iter()
                .filter(|(s, _)| is_multi_key_json(s))
                .map(|(s, _)| s.as_str())
                .collect();
            f.assertions
                .iter()
                .filter(|a| a.equality || a.name.starts_with("assert"))
                .filter(|a| {
                    json_vars.iter().any(|s| a.text.contains(*s))
                        || (JSON_WRITERS
                            .iter()
                            .any(|w| a.text.contains(&format!("{w}(")))
                            && !JSON_READERS
                                .iter()
                                .any(|r| a.text.contains(&format!("{r}("))))
                        || (!json_vars.is_empty() && a.name.contains("Equal"))
                })
                .map(|a| a.line)
                .min()
        }
    }
}

/// The facts seed a random generator (`setSeed(..)`, `random.seed(..)`, `new Random(n)`).
fn seeded(f: &Facts) -> bool {
    f.calls
        .iter()
        .any(|c| matches!(c.name.as_str(), "setSeed" | "seed" | "manual_seed") && c.nargs > 0)
        || f.news.iter().any(|n| n.ty == "Random" && n.nargs > 0)
}

/// Lines of unseeded random sources; none if the test seeds anything.
fn random_sources(f: &Facts) -> Vec<usize> {
    if seeded(f) {
        return Vec::new();
    }
    let mut lines: Vec<usize> = f
        .news
        .iter()
        .filter(|n| matches!(n.ty.as_str(), "Random" | "SecureRandom") && n.nargs == 0)
        .map(|n| n.line)
        .collect();
    for c in &f.calls {
        let recv = |r: &str| c.receiver.iter().any(|t| t == r);
        let hit = (recv("Math") && c.name == "random")
            || recv("ThreadLocalRandom")
            || recv("RandomUtils")
            || recv("RandomStringUtils")
            || recv("RandomStringGenerator")
            || (recv("random")
                && matches!(
                    c.name.as_str(),
                    "random"
                        | "randint"
                        | "randrange"
                        | "choice"
                        | "choices"
                        | "shuffle"
                        | "sample"
                        | "uniform"
                        | "gauss"
                        | "rand"
                        | "randn"
                        | "normal"
                        | "getrandbits"
                ))
            || (c.receiver.is_empty() && matches!(c.name.as_str(), "randint" | "randrange"))
            || matches!(
                c.name.as_str(),
                "nextInt"
                    | "nextLong"
                    | "nextDouble"
                    | "nextFloat"
                    | "nextGaussian"
                    | "nextBoolean"
            ) && !c.receiver.iter().any(|t| t == "it" || t == "iterator");
        if hit {
            lines.push(c.line);
        }
    }
    lines
}

const HASH_SOURCES: [&str; 8] = [
    "HashMap",
    "HashSet",
    "keySet",
    "values",
    "entrySet",
    "newHashMap",
    "newHashSet",
    "frozenset",
];

/// An assertion that compares as sets on both sides, or declares any order acceptable.
fn order_neutral(text: &str) -> bool {
    const SET_WRAPPERS: [&str; 6] = [
        "HashSet<",
        "TreeSet<",
        "newHashSet(",
        "Set.of(",
        "Set.copyOf(",
        "ImmutableSet.copyOf(",
    ];
    let wrapped: usize = SET_WRAPPERS.iter().map(|w| text.matches(w).count()).sum();
    wrapped >= 2
        || [
            "InAnyOrder",
            "containsOnly",
            "hasSameElementsAs",
            "assertCountEqual",
        ]
        .iter()
        .any(|w| text.contains(w))
}

const ORDERED_RENDERINGS: [&str; 11] = [
    "toString",
    "asList",
    "newArrayList",
    "containsExactly",
    "iterator",
    "next",
    "toArray",
    "join",
    "list",
    "collect",
    "get(0",
];

/// A hash-based source and a later assertion on an ordered rendering of it, or JSON text of
/// a map compared with a string literal.
fn hash_order(f: &Facts) -> Option<usize> {
    let hash_source = f
        .idents
        .iter()
        .filter(|(i, _)| HASH_SOURCES.contains(&i.as_str()))
        .map(|(_, l)| *l)
        .chain(
            f.calls
                .iter()
                .filter(|c| c.name == "set" && c.receiver.is_empty())
                .map(|c| c.line),
        )
        .min();
    let json_source = f
        .calls
        .iter()
        .filter(|c| JSON_WRITERS.contains(&c.name.as_str()))
        .map(|c| c.line)
        .chain(
            f.news
                .iter()
                .filter(|n| n.ty == "JSONObject" || n.ty == "JSONArray")
                .map(|n| n.line),
        )
        .min();
    if let Some(source) = hash_source {
        let ordered = f.assertions.iter().any(|a| {
            a.line >= source
                && !order_neutral(&a.text)
                && (ORDERED_RENDERINGS.iter().any(|r| {
                    a.text.contains(&format!("{r}(")) || a.text.contains(&format!(".{r}"))
                }) || a.text.contains("[0]")
                    || json_literal(&a.text))
        });
        if ordered {
            return Some(source);
        }
    }
    let source = json_source?;
    f.assertions
        .iter()
        .any(|a| a.line >= source && json_literal(&a.text))
        .then_some(source)
}

const JSON_WRITERS: [&str; 6] = [
    "toJSONString",
    "writeValueAsString",
    "toJson",
    "dumps",
    "serialize",
    "toJSON",
];

/// The text holds a string literal that starts like a JSON object or array.
fn json_literal(text: &str) -> bool {
    ["\"{", "\"[", "'{", "'["].iter().any(|p| text.contains(p))
}

const JSON_READERS: [&str; 6] = [
    "loads",
    "parse",
    "parseObject",
    "readValue",
    "fromJson",
    "readTree",
];

/// `{"a": 1, "b": 2}` as a string literal: an object with at least two keys.
fn is_multi_key_json(s: &str) -> bool {
    let inner = s.trim_matches(|c| c == '"' || c == '\'');
    let inner = inner.trim_start_matches('[');
    (inner.starts_with('{') || inner.starts_with("\\{"))
        && (inner.matches("\":").count()
            + inner.matches("':").count()
            + inner.matches("\" :").count())
            >= 2
}

const STATIC_MUTATOR_PREFIXES: [&str; 10] = [
    "set", "register", "add", "put", "clear", "reset", "install", "enable", "disable", "init",
];

/// A mutator called on what looks like a class (one capitalised, not all-caps token).
/// List constructors whose arguments are the elements in order.
const LIST_LITERALS: [&str; 5] = [
    "asList(",
    "List.of(",
    "newArrayList(",
    "ImmutableList.of(",
    "Stream.of(",
];

/// `assertEquals(asList("a", "b", "c"), computed)`: a list literal of at least three
/// elements compared with something that is not itself a literal or sorted.
fn ordered_literal_against_computed(text: &str) -> bool {
    let Some(start) = LIST_LITERALS
        .iter()
        .filter_map(|l| text.find(l).map(|i| i + l.len()))
        .min()
    else {
        return false;
    };
    // The literal's arguments: up to the matching parenthesis.
    let mut depth = 1usize;
    let mut commas = 0usize;
    let mut end = text.len();
    for (i, ch) in text[start..].char_indices() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    end = start + i;
                    break;
                }
            }
            ',' if depth == 1 => commas += 1,
            _ => {}
        }
    }
    // `asList(..).size()`: the literal is not compared as a list.
    if commas < 2 || end >= text.len() || text[end + 1..].starts_with('.') {
        return false;
    }
    let rest = format!("{}{}", &text[..start], &text[end..]);
    // Sorting either side, or comparing as sets, makes the order irrelevant.
    let order_neutral = [
        "sort",
        "Sorted",
        "HashSet",
        "TreeSet",
        "containsInAnyOrder",
        "InAnyOrder",
        "asSet",
        "Set.of",
        "newHashSet",
    ]
    .iter()
    .any(|w| text.contains(w));
    !order_neutral && tokens_outside_literal(&rest)
}

/// The text outside the list literal names something computed (a variable or a call), not
/// only assertion plumbing.
fn tokens_outside_literal(rest: &str) -> bool {
    super::facts::tokens(rest).iter().any(|t| {
        !t.starts_with("assert")
            && !matches!(
                t.as_str(),
                "Assert"
                    | "Assertions"
                    | "Arrays"
                    | "List"
                    | "Lists"
                    | "ImmutableList"
                    | "Stream"
                    | "of"
                    | "asList"
                    | "newArrayList"
                    | "is"
                    | "equalTo"
                    | "isEqualTo"
                    | "assertThat"
                    | "that"
                    | "Truth"
                    | "containsExactly"
                    | "message"
                    | "new"
                    | "String"
                    | "Integer"
                    | "Long"
                    | "Object"
                    | "true"
                    | "false"
                    | "null"
            )
    })
}

fn is_static_mutator(c: &Call) -> bool {
    let [recv] = c.receiver.as_slice() else {
        return false;
    };
    let class_like = recv.starts_with(|ch: char| ch.is_ascii_uppercase())
        && recv.chars().any(|ch| ch.is_ascii_lowercase());
    let excluded = matches!(
        recv.as_str(),
        "Mockito"
            | "Assert"
            | "Assertions"
            | "System"
            | "Thread"
            | "Arrays"
            | "Collections"
            | "Lists"
            | "Sets"
            | "Maps"
            | "Objects"
            | "Optional"
            | "Stream"
            | "String"
            | "Math"
            | "Integer"
            | "Long"
            | "Double"
            | "Boolean"
            | "Files"
            | "Paths"
            | "Executors"
            | "TimeUnit"
            | "Duration"
            | "Instant"
            | "Calendar"
            | "List"
            | "Map"
            | "Set"
            | "ImmutableList"
            | "ImmutableMap"
            | "ImmutableSet"
            | "IntStream"
    );
    class_like
        && !excluded
        && STATIC_MUTATOR_PREFIXES
            .iter()
            .any(|p| c.name.starts_with(p) && c.name.len() > p.len())
}

const MUTATORS: [&str; 12] = [
    "put", "add", "addAll", "putAll", "clear", "remove", "set", "append", "extend", "update",
    "pop", "insert",
];

fn shared_write(f: &Facts, t: &TestFacts) -> Option<usize> {
    let mut lines: Vec<usize> = Vec::new();
    for w in &f.writes {
        let first = w.tokens.first().map(String::as_str).unwrap_or("");
        // `View.prototype.render = ..` of a class or function the test declares itself is
        // not shared.
        let static_like = first.starts_with(|c: char| c.is_ascii_uppercase())
            && w.tokens.len() >= 2
            && !w.target.contains('(')
            && !f.locals.iter().any(|l| l == first);
        let class_attr = first == "cls";
        let shared = w.tokens.iter().any(|tok| t.shared_names.contains(tok))
            && !(first == "this" && w.tokens.len() == 2 && !t.shared_names.contains(&w.tokens[1]));
        if static_like || class_attr || shared {
            lines.push(w.line);
        }
    }
    for c in &f.calls {
        if MUTATORS.contains(&c.name.as_str())
            && c.receiver.iter().any(|tok| t.shared_names.contains(tok))
        {
            lines.push(c.line);
        }
    }
    for (name, line) in &f.globals {
        let _ = name;
        lines.push(*line);
    }
    lines.into_iter().min()
}

const CLOSE_NAMES: [&str; 9] = [
    "close",
    "closeQuietly",
    "shutdown",
    "shutdownNow",
    "disconnect",
    "stop",
    "release",
    "dispose",
    "destroy",
];

fn is_closeable_type(ty: &str) -> bool {
    [
        "InputStream",
        "OutputStream",
        "Reader",
        "Writer",
        "Socket",
        "Channel",
        "Connection",
        "RandomAccessFile",
        "Scanner",
        "ZipFile",
        "JarFile",
        "Client",
    ]
    .iter()
    .any(|s| ty.ends_with(s))
}

fn unclosed(f: &Facts, t: &TestFacts) -> Option<usize> {
    let closes = |facts: &Facts| {
        facts
            .calls
            .iter()
            .any(|c| CLOSE_NAMES.contains(&c.name.as_str()))
    };
    if closes(f) || closes(&t.context) || closes(&t.own) {
        return None;
    }
    let created = f
        .news
        .iter()
        .filter(|n| !n.managed && is_closeable_type(&n.ty))
        .map(|n| n.line);
    let opened = f
        .calls
        .iter()
        .filter(|c| {
            !c.managed
                && ((c.name == "open" && c.receiver.is_empty())
                    || matches!(
                        c.name.as_str(),
                        "getConnection" | "openStream" | "openConnection"
                    ))
        })
        .map(|c| c.line);
    created.chain(opened).min()
}

fn tight_bound(f: &Facts) -> Option<usize> {
    let nondeterministic = f.calls.iter().any(|c| {
        matches!(
            c.name.as_str(),
            "currentTimeMillis" | "nanoTime" | "perf_counter" | "monotonic" | "elapsed" | "hrtime"
        ) || (c.name == "time" && c.receiver.iter().any(|r| r == "time"))
            || (c.name == "now" && c.receiver.iter().any(|r| r == "performance" || r == "Date"))
    }) || !random_sources(f).is_empty();
    if !nondeterministic {
        return None;
    }
    f.assertions
        .iter()
        .filter(|a| a.relational && a.text.chars().any(|c| c.is_ascii_digit()))
        .map(|a| a.line)
        .min()
}

fn fixed_path(f: &Facts) -> Option<usize> {
    let file_api = f.news.iter().any(|n| {
        matches!(
            n.ty.as_str(),
            "File"
                | "FileOutputStream"
                | "FileWriter"
                | "FileInputStream"
                | "FileReader"
                | "PrintWriter"
        )
    }) || f.calls.iter().any(|c| {
        (c.receiver
            .iter()
            .any(|r| r == "Files" || r == "Paths" || r == "os" || r == "shutil" || r == "fs")
            && !c.name.is_empty())
            || (c.name == "open" && c.receiver.is_empty())
            || c.name == "get" && c.receiver.iter().any(|r| r == "Paths")
    });
    if !file_api {
        return None;
    }
    let uses_temp = f.calls.iter().any(|c| {
        c.name.contains("Temp")
            || c.name.contains("temp")
            || c.name == "mkdtemp"
            || c.name == "mkdtempSync"
            || c.receiver.iter().any(|r| r == "tempfile")
            || (c.name == "tmpdir" && c.receiver.iter().any(|r| r == "os"))
    }) || f
        .idents
        .iter()
        .any(|(i, _)| i == "TemporaryFolder" || i == "TempDir" || i == "tmp_path" || i == "tmpdir");
    if uses_temp {
        return None;
    }
    f.strings
        .iter()
        .filter(|(s, _)| looks_like_path(s))
        .map(|(_, l)| *l)
        .min()
}

/// A literal that names a file or directory: `"/tmp/x"`, `"target/out.txt"`, `"data.csv"`.
fn looks_like_path(s: &str) -> bool {
    let inner = s.trim_matches(|c| c == '"' || c == '\'');
    if inner.contains("://") || inner.contains(' ') || inner.len() < 3 {
        return false;
    }
    let has_ext = inner
        .rsplit_once('.')
        .map(|(stem, ext)| {
            !stem.is_empty()
                && (1..=4).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && !ext.chars().all(|c| c.is_ascii_digit())
        })
        .unwrap_or(false);
    inner.starts_with("/tmp")
        || inner.starts_with("target/")
        || inner.starts_with("build/")
        || (inner.contains('/') && has_ext)
        || has_ext && inner.starts_with(|c: char| c.is_ascii_lowercase()) && !inner.contains('(')
}

/// Timer rules that JavaScript fake timers (`jest.useFakeTimers()`, `vi.useFakeTimers()`,
/// `sinon.useFakeTimers()`) make deterministic; they fake the clock too, so every time rule
/// is dropped as well.
const FAKE_TIMER_RULES: [&str; 5] = [
    "js-set-timeout",
    "js-delay",
    "sleep-before-assert",
    "polling-loop",
    "sleep-any",
];

/// The facts install fake timers or a fake clock.
fn fake_timers(f: &Facts) -> bool {
    f.calls.iter().any(|c| match c.name.as_str() {
        "useFakeTimers" | "setSystemTime" => true,
        // `@sinonjs/fake-timers`: `FakeTimers.install()`.
        "install" => c.receiver.iter().any(|r| r == "FakeTimers"),
        _ => false,
    })
}

/// A JavaScript call that talks to another process over the network.
fn js_network_call(f: &Facts) -> bool {
    f.news.iter().any(|n| n.ty == "WebSocket")
        || f.calls.iter().any(|c| {
            let recv = |r: &str| c.receiver.iter().any(|t| t == r);
            matches!(c.name.as_str(), "fetch" | "axios" | "got" | "needle")
                || recv("axios")
                || recv("net")
                || ((recv("http") || recv("https")) && matches!(c.name.as_str(), "get" | "request"))
                || c.name == "connect"
        })
}

/// Fires the rules on a test's facts and returns every hit (one per rule), sorted by
/// (category, line, rule id).
pub fn fire(t: &TestFacts) -> Vec<Hit> {
    let mut hits = Vec::new();
    let seeded_here = seeded(&t.own) || seeded(&t.context);
    let faked = fake_timers(&t.own) || fake_timers(&t.context);
    for rule in RULES {
        if seeded_here && rule.category == Category::Randomness {
            continue;
        }
        if faked && (FAKE_TIMER_RULES.contains(&rule.id) || rule.category == Category::Time) {
            continue;
        }
        // JavaScript tests name URLs and hosts in requests to in-process servers
        // (supertest) and in expected headers: a URL literal is a network signal only
        // together with a call that leaves the process.
        if t.javascript
            && rule.category == Category::Network
            && matches!(rule.pat, Str(_) | Ident(_))
            && !(js_network_call(&t.own) || js_network_call(&t.context))
        {
            continue;
        }
        let own = first_line(rule, &t.own, t, true);
        let hit = match own {
            Some(line) => Some(Hit {
                rule,
                line,
                context: false,
            }),
            None => first_line(rule, &t.context, t, false).map(|line| Hit {
                rule,
                line,
                context: true,
            }),
        };
        if let Some(h) = hit {
            hits.push(h);
        }
    }
    hits.sort_by(|a, b| {
        (a.rule.category, a.line, a.rule.id).cmp(&(b.rule.category, b.line, b.rule.id))
    });
    hits
}

/// The weight a hit contributes.
pub fn effective_weight(h: &Hit) -> u32 {
    if h.context {
        h.rule.weight.div_ceil(2)
    } else {
        h.rule.weight
    }
}

/// Scores per category and the decision (see the module docs).
pub fn decide(hits: &[Hit], min_score: u32) -> (BTreeMap<Category, u32>, Option<Category>) {
    let mut scores: BTreeMap<Category, u32> = BTreeMap::new();
    for h in hits {
        *scores.entry(h.rule.category).or_insert(0) += effective_weight(h);
    }
    let mut best: Option<(Category, u32)> = None;
    for c in PRIORITY {
        let s = scores.get(&c).copied().unwrap_or(0);
        if s >= min_score.max(1) && best.is_none_or(|(_, b)| s > b) {
            best = Some((c, s));
        }
    }
    (scores, best.map(|(c, _)| c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_category_has_a_rule_and_ids_are_unique() {
        for c in PRIORITY {
            assert!(RULES.iter().any(|r| r.category == c), "{c:?} has no rule");
        }
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate rule ids");
    }

    #[test]
    fn priority_lists_each_category_once() {
        let set: std::collections::BTreeSet<_> = PRIORITY.iter().collect();
        assert_eq!(set.len(), 13);
    }

    #[test]
    fn ties_go_to_the_earlier_priority() {
        let rule_t = RULES.iter().find(|r| r.id == "assert-timeout").unwrap();
        let rule_f = RULES.iter().find(|r| r.id == "float-equality").unwrap();
        assert_eq!(rule_t.weight, rule_f.weight);
        let hits = vec![
            Hit {
                rule: rule_f,
                line: 1,
                context: false,
            },
            Hit {
                rule: rule_t,
                line: 2,
                context: false,
            },
        ];
        assert_eq!(decide(&hits, MIN_SCORE).1, Some(Category::TestCaseTimeout));
    }

    #[test]
    fn weak_signals_alone_give_no_category() {
        let weak = RULES.iter().find(|r| r.id == "hash-map").unwrap();
        let hits = vec![Hit {
            rule: weak,
            line: 1,
            context: false,
        }];
        assert_eq!(decide(&hits, MIN_SCORE).1, None);
    }

    #[test]
    fn known_flaky_tests_get_their_strongest_weak_signal() {
        let weak = RULES.iter().find(|r| r.id == "hash-map").unwrap();
        let weaker_tie = RULES.iter().find(|r| r.id == "future-get").unwrap();
        let hits = vec![
            Hit {
                rule: weaker_tie,
                line: 1,
                context: false,
            },
            Hit {
                rule: weak,
                line: 2,
                context: false,
            },
        ];
        // Equal scores (1 and 1): the tie-break order puts unordered collections first.
        assert_eq!(
            decide(&hits, KNOWN_FLAKY_MIN_SCORE).1,
            Some(Category::UnorderedCollection)
        );
        assert_eq!(decide(&[], KNOWN_FLAKY_MIN_SCORE).1, None);
    }

    #[test]
    fn context_hits_count_half() {
        let rule = RULES.iter().find(|r| r.id == "sleep-thread").unwrap();
        assert_eq!(
            effective_weight(&Hit {
                rule,
                line: 1,
                context: true
            }),
            2
        );
    }

    #[test]
    fn path_literals() {
        assert!(looks_like_path("\"/tmp/out\""));
        assert!(looks_like_path("\"target/report.txt\""));
        assert!(!looks_like_path("\"http://x/y.html\""));
        assert!(!looks_like_path("\"hello world.\""));
        assert!(!looks_like_path("\"1.5\""));
    }

    #[test]
    fn ordered_literal_needs_three_elements_and_a_computed_side() {
        assert!(ordered_literal_against_computed(
            r#"assertEquals(Arrays.asList("a", "b", "c"), graph.order())"#
        ));
        assert!(!ordered_literal_against_computed(
            r#"assertEquals(Arrays.asList("a", "b"), graph.order())"#
        ));
        assert!(!ordered_literal_against_computed(
            r#"assertEquals(Arrays.asList("a", "b", "c").size(), order.size())"#
        ));
        assert!(!ordered_literal_against_computed(
            r#"assertEquals(Arrays.asList(1, 2, 3), Arrays.asList(1, 2, 3))"#
        ));
        assert!(!ordered_literal_against_computed(
            r#"assertThat(roots, containsInAnyOrder(asList("a", "b", "c")))"#
        ));
    }

    #[test]
    fn set_comparisons_are_order_neutral() {
        assert!(order_neutral(
            "assertEquals(new HashSet<>(asList(1, 2, 3)), new HashSet<>(found))"
        ));
        assert!(order_neutral("assertThat(found).containsOnly(1, 2, 3)"));
        assert!(!order_neutral(
            "assertEquals(asList(1, 2, 3), new ArrayList<>(set))"
        ));
    }
}
