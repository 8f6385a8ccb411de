//! The syntax layer: languages, parsing, positions, function discovery and the normalised AST.
//! Pure and synchronous (architecture invariant 2).

pub mod cancel;
pub mod functions;
pub mod imports;
pub mod lang;
pub mod language;
pub mod normalize;
pub mod parse;
pub mod position;
pub mod preproc;
mod splice;
pub mod walk;

pub use cancel::Cancel;
pub use language::Language;
pub use parse::ParsedFile;
