//! The language server (`crosscheck lsp`): the only module that knows LSP types.
//!
//! Thin protocol handlers (`handlers/`, one per method) convert LSP types at the boundary and
//! call the core: `syntax` for parsing, `analysis` for the deterministic results, and a
//! [`scheduler::Checker`] (the cross-check engine) for LLM cross-checks. Module map:
//!
//! * [`server`]: shared state, the concurrency model, the analysis and workspace loops,
//!   serving over stdio or any byte stream.
//! * [`encoding`]: position encoding negotiation and ALL position <-> offset conversions.
//! * [`documents`]: open documents and incremental synchronisation.
//! * [`config`]: configuration sources, precedence, the workspace trust boundary.
//! * [`exclusions`]: exclusion patterns and `.gitignore`.
//! * [`engine`]: runs the deterministic core on a document.
//! * [`equiv`]: the "check equivalence with git HEAD" code action.
//! * [`flaky`]: flaky-test hints (code lens, hover, explain command).
//! * [`findings`]: the internal finding shape, providers, suppression comments.
//! * [`diagnostics`]: tiers, presentation, conversion to LSP diagnostics.
//! * [`questions`]: which LLM questions a document gets (one per taint finding, function
//!   tasks for edited functions), prepared by the core.
//! * [`scheduler`]: background LLM questions (debounce, cache, cancellation, retries).
//! * [`checks`]: the cross-check engine as the scheduler's checker.
//! * [`transport`]: input hardening (malformed frames are answered, not fatal).
//! * [`workspace`]: folders, files on disk, the call graph and workspace findings.
//! * [`background`]: threads at a lower CPU priority for the workspace analysis and indexing.
//! * [`settings_schema`]: the editor settings schema (`crosscheck schema lsp-settings`).
//! * [`client`]: a minimal LSP client (in-process tests and the latency benchmark).
//! * [`bench`](mod@bench): the didChange -> publishDiagnostics latency benchmark.

pub mod background;
pub mod bench;
pub mod bench_workspace;
pub mod checks;
pub mod client;
pub mod config;
pub mod diagnostics;
pub mod documents;
pub mod encoding;
pub mod engine;
pub mod equiv;
pub mod exclusions;
pub mod findings;
pub mod flaky;
pub mod handlers;
pub mod questions;
pub mod scheduler;
pub mod server;
pub mod settings_schema;
pub mod transport;
pub mod workspace;

pub use server::{build_service, run_stdio, serve, ServerOptions};
