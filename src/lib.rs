pub mod syntax;
pub mod analysis;
