//! Integration tests: one binary, one module per area.

mod batch;
mod util;

mod bounded_cost;
mod cli_commands;
mod cli_errors;
mod cli_eval;
mod cli_filter;
mod cli_serve;
mod cli_tokens;
mod cli_train;
mod corpus_readers;
mod daemon;
mod daemon_resilience;
mod dovecot;
mod dump_restore;
mod fusion;
mod learning;
mod line_endings;
mod model_file;
mod model_file_in_use;
mod models_oracle;
mod non_regular_files;
mod policy;
mod pruning;
mod scorer;
mod service;
mod spamd_server;
mod tokenizer;
