//! Header tokens. Selected fields are tokenized with the lowercased field name as prefix
//! (`subject:free`, `from:example.com`, `x-mailer:outlook`), so the same word means different
//! things in different places. Every field name present also yields `header:NAME`. Fields
//! named `X-Spam-*` and `X-Bogosity` are ignored: they hold verdicts (ours or another
//! filter's) that a sender can forge and that would teach the model to trust them.

use super::ngrams::floor_char_boundary;
use super::sink::capped;
use super::{Sink, url, words};
use mail_parser::{Address, ContentType, Header, HeaderValue, Host, MessagePart, MimeHeaders};

/// Longest header text (bytes) that is tokenized; longer values are cut there.
const MAX_HEADER_TEXT: usize = 8 * 1024;

/// Longest field name (bytes) used in tokens; longer names are cut there. The name prefixes
/// every word of its field, so an unbounded name would multiply the field's bytes (a 5 KB name
/// over 3,000 two-letter words made 14 MB of tokens from 14 KB). Real names are shorter (the
/// longest Exchange fields have about 50 bytes).
const MAX_NAME_BYTES: usize = 64;

/// Fields whose text is tokenized word by word.
const TEXT_FIELDS: &[&str] = &[
    "subject",
    "x-mailer",
    "user-agent",
    "list-id",
    "precedence",
    "organization",
    "x-priority",
    "x-msmail-priority",
    "importance",
    "mime-version",
];
/// Fields holding addresses.
const ADDRESS_FIELDS: &[&str] = &["from", "to", "cc", "reply-to", "sender", "return-path"];

/// Tokens for the top-level header block of a message.
pub(crate) fn push_headers(sink: &mut Sink<'_>, part: &MessagePart<'_>) {
    let headers = part.headers();
    let received: Vec<&Header<'_>> = headers
        .iter()
        .filter(|h| h.name.as_str().eq_ignore_ascii_case("received"))
        .collect();
    let keep_received = received
        .len()
        .saturating_sub(sink.config().received_headers);
    for header in &received[keep_received..] {
        if let HeaderValue::Received(r) = &header.value {
            for host in [r.from(), r.helo(), r.by()].into_iter().flatten() {
                push_received_host(sink, host);
            }
            if let Some(ip) = r.from_ip() {
                push_ip(sink, ip);
            }
        }
    }
    // One buffer, reused for every field, holds both the prefix and, without its colon, the
    // lowercased name.
    let mut prefix = String::with_capacity(MAX_NAME_BYTES + 1);
    for header in headers {
        if sink.is_full() {
            return;
        }
        let name = header.name.as_str();
        let name = &name[..floor_char_boundary(name, MAX_NAME_BYTES)];
        if is_verdict_field(name.as_bytes()) {
            continue;
        }
        prefix.clear();
        prefix.push_str(name);
        prefix.make_ascii_lowercase();
        prefix.push(':');
        let name = &prefix[..prefix.len() - 1];
        if sink.config().header_names {
            sink.push_joined(&["header:", name]);
        }
        if TEXT_FIELDS.contains(&name) {
            for text in header_texts(&header.value) {
                push_header_text(sink, &prefix, text);
            }
        } else if ADDRESS_FIELDS.contains(&name) {
            push_addresses(sink, &prefix, &header.value);
        } else if name == "message-id" {
            for id in header_texts(&header.value) {
                if let Some((_, domain)) = id.rsplit_once('@') {
                    let domain = capped(domain.trim_end_matches('>')).to_ascii_lowercase();
                    sink.push_joined(&["message-id:", &domain]);
                }
            }
        } else if sink.config().all_headers
            && !matches!(
                name,
                "received" | "content-type" | "content-transfer-encoding"
            )
        {
            for text in header_texts(&header.value) {
                push_header_text(sink, &prefix, text);
            }
        }
    }
    push_part_type(sink, part);
}

fn push_received_host(sink: &mut Sink<'_>, host: &Host<'_>) {
    match host {
        Host::Name(name) => {
            let name = name.trim_matches(['[', ']']).to_ascii_lowercase();
            if !name.is_empty() {
                url::push_host(sink, "received:", &name);
            }
        }
        Host::IpAddr(ip) => push_ip(sink, *ip),
    }
}

fn push_ip(sink: &mut Sink<'_>, ip: std::net::IpAddr) {
    use std::fmt::Write;
    // Writing to a String cannot fail.
    sink.push_with(|token| {
        let _ = write!(token, "received:ip:{ip}");
    });
}

/// Content type, charset, transfer encoding and (for attachments) file name of one part.
pub(crate) fn push_part_type(sink: &mut Sink<'_>, part: &MessagePart<'_>) {
    if let Some(ct) = part.content_type() {
        push_content_type(sink, ct);
    }
    if let Some(cte) = part.content_transfer_encoding() {
        sink.push_lower("encoding:", capped(cte.trim()));
    }
    if let Some(name) = part.attachment_name() {
        push_header_text(sink, "filename:", name);
        if let Some((_, ext)) = name.rsplit_once('.') {
            sink.push_lower("filename:ext:", capped(ext.trim()));
        }
    }
}

fn push_content_type(sink: &mut Sink<'_>, ct: &ContentType<'_>) {
    let subtype = capped(ct.subtype().unwrap_or(""));
    sink.push_lower_joined("content-type:", &[capped(ct.ctype()), "/", subtype]);
    if let Some(charset) = ct.attribute("charset") {
        sink.push_lower("charset:", capped(charset.trim()));
    }
}

fn push_addresses(sink: &mut Sink<'_>, prefix: &str, value: &HeaderValue<'_>) {
    let addrs: Vec<_> = match value {
        HeaderValue::Address(Address::List(list)) => list.iter().collect(),
        HeaderValue::Address(Address::Group(groups)) => {
            groups.iter().flat_map(|g| g.addresses.iter()).collect()
        }
        other => {
            for text in header_texts(other) {
                push_header_text(sink, prefix, text);
            }
            return;
        }
    };
    for addr in addrs {
        if let Some(name) = &addr.name {
            push_header_text(sink, prefix, name);
        }
        if let Some(address) = &addr.address {
            let address = capped(address.trim()).to_lowercase();
            sink.push_joined(&[prefix, "addr:", &address]);
            if let Some((_, domain)) = address.rsplit_once('@') {
                url::push_host(sink, prefix, domain.trim_end_matches('.'));
            }
        }
    }
}

fn push_header_text(sink: &mut Sink<'_>, prefix: &str, text: &str) {
    let end = floor_char_boundary(text, MAX_HEADER_TEXT);
    words::push_text(sink, prefix, &text[..end]);
}

/// The text pieces of a header value, whatever form mail-parser gave it.
fn header_texts<'a>(value: &'a HeaderValue<'_>) -> Vec<&'a str> {
    match value {
        HeaderValue::Text(t) => vec![t.as_ref()],
        HeaderValue::TextList(list) => list.iter().map(|t| t.as_ref()).collect(),
        HeaderValue::Address(Address::List(list)) => list
            .iter()
            .flat_map(|a| [a.name.as_deref(), a.address.as_deref()])
            .flatten()
            .collect(),
        _ => Vec::new(),
    }
}

/// How the names of the fields [`is_verdict_field`] leaves out start (in any case), besides
/// `X-Bogosity`: the prefix every header style of spamsort's must start with.
pub(crate) const VERDICT_PREFIX: &str = "X-Spam";

/// True for a field that holds a filter's verdict, ours or another's (`X-Spam*`,
/// `X-Bogosity`, in any case): a sender can forge it and `spamsort filter` adds it, so it is
/// no evidence and a filtered copy must tokenize as its original.
pub(crate) fn is_verdict_field(name: &[u8]) -> bool {
    let prefix = VERDICT_PREFIX.as_bytes();
    let starts = name
        .get(..prefix.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(prefix));
    starts || name.eq_ignore_ascii_case(b"x-bogosity")
}
