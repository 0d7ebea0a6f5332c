//! A server for SpamAssassin's spamd protocol (SPAMC/1.5), so spamc, spamass-milter, Exim's
//! `spamd_address`, Haraka and Postfix content filters can use spamsort unchanged.
//! `protocol.rs` parses and formats; `server.rs` listens, bounds and answers.

pub mod protocol;
mod server;

pub use server::{Address, Server, ServerConfig, ServerHandle};
