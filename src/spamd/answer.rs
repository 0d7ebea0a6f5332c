//! The answer to each request once its head and body are in: the checks a head must pass,
//! classifying commands (CHECK, SYMBOLS, REPORT, REPORT_IFSPAM, PROCESS, HEADERS), TELL, and
//! the answers for oversize messages. Pure functions of the request, the message and the
//! shared filter, run on the worker threads (`server.rs`); `reactor.rs` moves the bytes.

use super::inflate::inflate;
use super::protocol::{
    Command, ProtocolError, REQUIRED_SCORE, Request, Status, result_head, status_line, symbol,
};
use super::server::ServerConfig;
use super::users::UserModels;
use crate::filter::policy::score;
use crate::filter::scorer::ScorerFile;
use crate::filter::shared::SharedFilter;
use crate::filter::stamp::header_block_len;
use crate::filter::{Classification, Explanation};
use crate::label::{Label, Thresholds, Verdict};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What the workers share.
pub(super) struct Context {
    /// The shared model: for every request without per-user models.
    pub(super) filter: Arc<SharedFilter>,
    /// Per-user model files, if configured.
    pub(super) users: Option<UserModels>,
    /// The most per-user model files TELL may make (`ServerConfig::max_user_models`).
    pub(super) max_user_models: usize,
    /// Held while a TELL makes a user's model file, so that TELLs of new users made at once
    /// cannot pass `max_user_models` together.
    pub(super) making_user_model: Mutex<()>,
    /// The server's `max_size`: a `Compress: zlib` message inflates to at most this.
    pub(super) max_size: u64,
}

impl Context {
    /// The model file of the request's user, if per-user models are on and the request names
    /// a user; a name that could be a path trick is refused.
    fn user_model(&self, request: &Request) -> Result<Option<PathBuf>, ProtocolError> {
        let (Some(users), Some(user)) = (&self.users, &request.user) else {
            return Ok(None);
        };
        users.path(user).map(Some).map_err(|e| ProtocolError {
            status: Status::NoUser,
            message: e.to_string(),
        })
    }

    /// The classification of `message` with the model of `user` (the user's file once it
    /// exists, else the shared one), with its explanation if `explain` (the commands that list
    /// tokens), and the thresholds it was judged by. A user's file is read as the pipe filter
    /// reads it (see [`ScorerFile`]): only the blocks of the score table the message's tokens
    /// fall in, the journal applied to them, so a request holds no more of it than the message
    /// needs (a whole load cost each request some 14 ms on a model of the SpamAssassin corpus).
    /// The scores are those of the file loaded whole.
    fn judge(
        &self,
        user: Option<&Path>,
        message: &[u8],
        explain: bool,
    ) -> Result<(Classification, Option<Explanation>, Thresholds), ProtocolError> {
        match user {
            Some(path) if path.exists() => {
                // A user's model answers under the server's policy, as the shared one does.
                let unavailable = |e: crate::Error| ProtocolError {
                    status: Status::Unavailable,
                    message: crate::error::ErrorChain(&e).to_string(),
                };
                let policy = self.filter.policy();
                let file = ScorerFile::open(path, policy.classifier())
                    .map_err(|e| unavailable(e.into()))?;
                let scorer = policy.scorer(&file).map_err(unavailable)?;
                let (c, explanation) = if explain {
                    let e = scorer.explain(message).map_err(|e| unavailable(e.into()))?;
                    (e.classification, Some(e))
                } else {
                    let c = scorer
                        .classify(message)
                        .map_err(|e| unavailable(e.into()))?;
                    (c, None)
                };
                Ok((c, explanation, scorer.thresholds()))
            }
            _ => {
                let filter = self.filter.current();
                let explanation = explain.then(|| filter.explain(message, None)).flatten();
                let c = match &explanation {
                    Some(e) => e.classification,
                    None => filter.classify(message),
                };
                Ok((c, explanation, filter.thresholds()))
            }
        }
    }

    /// Learns `message` as `label` into the model file of a user, `path`, as TELL does: a
    /// missing file is made (and the directories the template puts it in, see
    /// [`UserModels::make_user_directories`]), a copy of the shared model, only while fewer than
    /// `max_user_models` per-user model files exist; past that the TELL is refused
    /// `EX_CANTCREAT` and nothing is learned or made.
    fn learn_for_user(
        &self,
        path: &Path,
        message: &[u8],
        label: Label,
    ) -> Result<crate::LearnOutcome, ProtocolError> {
        if path.exists() {
            return self
                .filter
                .learn_into(path, message, label)
                .map_err(learning_failed);
        }
        let _making = self
            .making_user_model
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(users) = self.users.as_ref().filter(|_| !path.exists()) {
            let made = users.count().map_err(|e| ProtocolError {
                status: Status::IoErr,
                message: format!("cannot count the per-user model files: {e}"),
            })?;
            if made >= self.max_user_models {
                return Err(ProtocolError {
                    status: Status::CantCreat,
                    message: format!(
                        "no model file of this user yet, and {made} per-user model files exist, \
                         the most this server makes (--max-user-models {}): not learned",
                        self.max_user_models
                    ),
                });
            }
            users
                .make_user_directories(path)
                .map_err(|e| ProtocolError {
                    status: Status::CantCreat,
                    message: format!("cannot make the directory of this user's model file: {e}"),
                })?;
        }
        self.filter
            .learn_into(path, message, label)
            .map_err(learning_failed)
    }
}

/// The answer to a TELL whose learning failed (the model file could not be read or saved).
fn learning_failed(e: crate::Error) -> ProtocolError {
    ProtocolError {
        status: Status::IoErr,
        message: format!("learning failed: {}", crate::error::ErrorChain(&e)),
    }
}

/// What to do once a request head is in.
pub(super) enum Plan {
    /// Send this answer at once (PING).
    Answer(Vec<u8>, String),
    /// Say nothing and close (SKIP).
    Close,
    /// Read a body of this many bytes and classify it.
    Classify(u64),
    /// Read an oversize body of `length` bytes and answer it unclassified (see [`oversize`]):
    /// spooled to disk to be returned (PROCESS, if the spool has room for it, see
    /// [`ServerConfig::max_spool`]) or dropped.
    Oversize { length: u64, spool: bool },
}

/// Checks a request head against the server's settings: everything that can be refused before
/// the body is read.
pub(super) fn plan(request: &Request, config: &ServerConfig) -> Result<Plan, ProtocolError> {
    match request.command {
        Command::Ping => return Ok(Plan::Answer(status_line(Status::Ok, "PONG"), "PONG".into())),
        Command::Skip => return Ok(Plan::Close),
        _ => {}
    }
    if let Some(c) = request.compress.as_ref().filter(|c| !is_zlib(c)) {
        return Err(ProtocolError {
            status: Status::Unavailable,
            message: format!("Compress: {c} is not supported (only zlib)"),
        });
    }
    if request.command == Command::Tell && !config.allow_tell {
        return Err(ProtocolError {
            status: Status::Unavailable,
            message: "TELL commands are not enabled, set the --allow-tell switch.".into(),
        });
    }
    let length = request
        .content_length
        .ok_or_else(|| ProtocolError::protocol("Content-length required"))?;
    Ok(if length > config.max_size {
        Plan::Oversize {
            length,
            // A compressed message cannot be returned as it came: the client keeps its copy.
            spool: request.command == Command::Process
                && length <= config.max_spool
                && request.compress.is_none(),
        }
    } else {
        Plan::Classify(length)
    })
}

/// True for the one `Compress` method spamd knows, `zlib`.
fn is_zlib(method: &str) -> bool {
    method.eq_ignore_ascii_case("zlib")
}

/// Answers a request whose whole message is in (zlib-compressed under `Compress: zlib`, then
/// inflated to at most `max_size` bytes first): the answer's bytes and the log text.
pub(super) fn answer(request: &Request, message: &[u8], context: &Context) -> (Vec<u8>, String) {
    let inflated;
    let message = if request.compress.is_some() {
        match inflate(message, context.max_size) {
            Ok(m) => inflated = m,
            Err(e) => return failure(&e),
        }
        &inflated[..]
    } else {
        message
    };
    let mut response = Vec::new();
    let result = context.user_model(request).and_then(|user| {
        if request.command == Command::Tell {
            tell(request, message, &mut response, context, user.as_deref())
        } else {
            classify(
                request.command,
                message,
                &mut response,
                context,
                user.as_deref(),
            )
        }
    });
    match result {
        Ok(log) => (response, log),
        Err(e) => failure(&e),
    }
}

/// An error's answer and log text.
pub(super) fn failure(e: &ProtocolError) -> (Vec<u8>, String) {
    (e.response(), format!("{} {}", e.status.name(), e.message))
}

/// Answers a classifying command with the model of `user` (see [`Context::judge`]); returns
/// the log text.
fn classify(
    command: Command,
    message: &[u8],
    out: &mut Vec<u8>,
    context: &Context,
    user: Option<&Path>,
) -> Result<String, ProtocolError> {
    let explain = matches!(
        command,
        Command::Symbols | Command::Report | Command::ReportIfSpam
    );
    let (c, explanation, thresholds) = context.judge(user, message, explain)?;
    let score = score(&c, thresholds.spam());
    let is_spam = c.verdict == Verdict::Spam;
    let style = &context.filter.policy().headers;
    let body: Vec<u8> = match command {
        Command::Process => style
            .mark(message, &c, thresholds)
            .unwrap_or_else(|_| message.to_vec()),
        Command::Headers => {
            let marked = style
                .mark(message, &c, thresholds)
                .unwrap_or_else(|_| message.to_vec());
            marked[..headers_len(message, &marked)].to_vec()
        }
        Command::Symbols => explanation.as_ref().map_or_else(Vec::new, |e| {
            e.contributions
                .iter()
                .take(20)
                .map(|(token, _)| symbol(token))
                .collect::<Vec<_>>()
                .join(",")
                .into_bytes()
        }),
        Command::Report => report(explanation.as_ref(), score),
        Command::ReportIfSpam if is_spam => report(explanation.as_ref(), score),
        _ => Vec::new(),
    };
    let length = (command != Command::Check).then_some(body.len() as u64);
    out.extend(result_head(length, is_spam, score));
    out.extend(body);
    Ok(format!(
        "{} probability {:.4} score {score:.1} by {} ({} bytes)",
        c.verdict,
        c.score.p_spam(),
        c.model,
        message.len()
    ))
}

/// How much of `marked` (the message `original` with its header block marked) HEADERS answers.
/// spamc puts the answer in front of the original's body, which it takes to start after the
/// first `\r\n\r\n` or `\n\n` (libspamc's `_append_original_body`): so the answer runs to
/// there, taking along any lines that end the header block before it (one that is not a field,
/// as a fold that lost its indent), and the message comes out whole. Without such a blank line
/// spamc keeps its copy whatever comes back; the answer is then the marked header block.
fn headers_len(original: &[u8], marked: &[u8]) -> usize {
    let blank = |sep: &[u8]| memchr::memmem::find(original, sep).map(|at| (at, at + sep.len()));
    let body_start = match (blank(b"\r\n\r\n"), blank(b"\n\n")) {
        (Some(crlf), Some(lf)) => Some(crlf.min(lf).1),
        (one, other) => one.or(other).map(|(_, end)| end),
    };
    match body_start {
        // Marking changes the header block only, which ends at or before that blank line.
        Some(start) if marked.ends_with(&original[start..]) => {
            marked.len() - (original.len() - start)
        }
        _ => header_block_len(marked),
    }
}

/// The REPORT body: the verdict and the strongest tokens with their points.
fn report(explanation: Option<&crate::Explanation>, score: f64) -> Vec<u8> {
    let Some(e) = explanation else {
        return Vec::new();
    };
    let c = &e.classification;
    let mut text = format!(
        "spamsort verdict: {} (probability {:.4} by {}, {} tokens)\r\n\r\n\
         Content analysis details:   ({score:.1} points, {:.1} required)\r\n\r\n\
         \x20pts token (its share of ln(P(spam) / P(ham)))\r\n\
         ---- --------------------------------------------------\r\n",
        c.verdict,
        c.score.p_spam(),
        c.model,
        c.tokens,
        REQUIRED_SCORE,
    );
    for (token, weight) in e.contributions.iter().take(20) {
        let points = weight * e.log_odds_per_unit;
        text.push_str(&format!("{points:>4.1} {}\r\n", symbol(token)));
    }
    text.into_bytes()
}

/// Answers TELL: learns or forgets the message in the local (only) database: the model file
/// of `user` if given (a missing one starts as a copy of the shared model, within the
/// server's cap on them, see [`Context::learn_for_user`]), else the shared one.
fn tell(
    request: &Request,
    message: &[u8],
    out: &mut Vec<u8>,
    context: &Context,
    user: Option<&Path>,
) -> Result<String, ProtocolError> {
    let local = |dbs: &[String]| dbs.iter().any(|d| d == "local");
    let (set, remove) = (local(&request.set), local(&request.remove));
    if set && remove {
        return Err(ProtocolError::protocol(
            "Set and Remove both name the local database",
        ));
    }
    let mut header = String::new();
    let mut log = "nothing to do for the local database".to_string();
    if (set || remove) && crate::corpus::is_blank(message) {
        return Err(ProtocolError {
            status: Status::DataErr,
            message: "an empty message (no bytes but white space): nothing to learn".into(),
        });
    }
    if set {
        let label: Label = request.message_class.ok_or_else(|| ProtocolError {
            status: Status::DataErr,
            message: "TELL with Set needs a Message-class (spam or ham)".into(),
        })?;
        let outcome = match user {
            Some(path) => context.learn_for_user(path, message, label)?,
            None => context
                .filter
                .learn(message, label)
                .map_err(learning_failed)?,
        };
        // As spamd: `DidSet` only when the database changed, so spamc says "Message was
        // already un/learned" for a message learned with this label before.
        log = match outcome {
            crate::LearnOutcome::AlreadyLearned => format!("already learned as {label}"),
            _ => {
                header = "DidSet: local\r\n".to_string();
                format!("learned as {label}")
            }
        };
    } else if remove {
        // The record of learned messages knows the label: Message-class is not needed.
        let forgot = match user {
            Some(path) => context.filter.unlearn_from(path, message),
            None => context.filter.unlearn(message),
        }
        .map_err(learning_failed)?;
        log = match forgot {
            Some(label) => {
                header = "DidRemove: local\r\n".to_string();
                format!("forgot, learned as {label}")
            }
            None => "not learned before: nothing to forget".to_string(),
        };
    }
    out.extend(status_line(Status::Ok, Status::Ok.name()));
    out.extend(header.into_bytes());
    out.extend(b"Content-length: 0\r\n\r\n");
    Ok(log)
}

/// The answer to a message over `max_size`, sent once the whole body is in (answering
/// earlier would deadlock a client such as spamc that sends everything before it reads): the
/// answer's head and log text. PROCESS answers the message unchanged when it was `spooled`, so
/// the head announces `length` bytes and the spooled message follows it; CHECK, SYMBOLS, REPORT
/// and REPORT_IFSPAM say `Spam: False ; 0.0 / 5.0` with an empty body; HEADERS, TELL and a
/// PROCESS that could not be spooled answer `EX_DATAERR`, and the client keeps its copy.
pub(super) fn oversize(command: Command, length: u64, spooled: bool) -> (Vec<u8>, String) {
    let log = format!("oversize message of {length} bytes, not classified");
    let refuse = |why: &str| {
        failure(&ProtocolError {
            status: Status::DataErr,
            message: format!("message of {length} bytes is over the server's --max-size{why}"),
        })
    };
    match command {
        Command::Process if spooled => (result_head(Some(length), false, 0.0), log),
        Command::Process => refuse(" and could not be held to return it"),
        Command::Headers | Command::Tell => refuse(""),
        _ => (result_head(Some(0), false, 0.0), log),
    }
}
