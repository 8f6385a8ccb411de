pub mod syntax;
pub mod analysis;
pub mod crosscheck;
