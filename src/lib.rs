pub mod syntax;
pub mod analysis;
pub mod cli;
pub mod stats;
