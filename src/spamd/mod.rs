//! A server for SpamAssassin's spamd protocol (SPAMC/1.5), so spamc, spamass-milter, Exim's
//! `spamd_address`, Haraka and Postfix content filters can use spamsort unchanged.
//! `protocol.rs` parses and formats; `server.rs` binds and runs the worker threads;
//! `reactor.rs` moves the bytes and keeps the deadlines; `incoming.rs` assembles requests as
//! they arrive; `answer.rs` answers them (`inflate.rs` unpacks a `spamc -z` body); `users.rs` maps spamd's `User:` to a model file.

mod answer;
mod incoming;
mod inflate;
pub mod protocol;
mod reactor;
mod server;
pub mod users;

pub use server::{
    Address, DEFAULT_MAX_USER_MODELS, Server, ServerConfig, ServerHandle, default_spool_dir,
    raise_open_file_limit,
};
pub use users::UserModels;
