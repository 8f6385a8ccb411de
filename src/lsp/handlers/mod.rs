//! One module per LSP method. Handlers convert LSP types at the boundary and call the core;
//! text synchronisation handlers are synchronous (see `server.rs`).

pub mod code_action;
pub mod code_lens;
pub mod did_change;
pub mod did_change_configuration;
pub mod did_change_watched_files;
pub mod did_change_workspace_folders;
pub mod did_close;
pub mod did_open;
pub mod execute_command;
pub mod hover;
pub mod initialize;
pub mod set_trace;
pub mod shutdown;
pub mod status;
