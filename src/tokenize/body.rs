//! The MIME walk: every part of a parsed message contributes tokens. Text parts give words;
//! HTML parts give their visible text, link targets and tag names; attachments give only their
//! type and file name; attached messages are walked like the outer one, to a bounded depth.
//! The mail-parser decoders called here for second chances run under [`guard::parser`]: their
//! panics mean "could not decode", not a bug in spamsort.

use super::sink::capped;
use super::{Sink, guard, headers, html, url, words};
use mail_parser::decoders::{base64, charsets, quoted_printable};
use mail_parser::{Encoding, Message, MessagePart, MimeHeaders, PartType};
use std::borrow::Cow;

/// Attached messages deeper than this are not opened (mail-parser also stops decoding nested
/// encoded messages after a few levels).
const MAX_MESSAGE_DEPTH: usize = 3;

/// Emits the tokens of a parsed message.
pub(crate) fn push_message(sink: &mut Sink<'_>, message: &Message<'_>, depth: usize) {
    #[cfg(test)]
    guard::injection_point();
    for (i, part) in message.parts.iter().enumerate() {
        if sink.is_full() {
            return;
        }
        if i == 0 {
            headers::push_headers(sink, part);
        } else {
            headers::push_part_type(sink, part);
        }
        let body = match &part.body {
            PartType::Text(raw) if part.is_encoding_problem => redecode(part, raw),
            PartType::Html(markup) if markup.contains('\u{FFFD}') => meta_charset(message, part),
            _ => None,
        };
        match body.as_ref().unwrap_or(&part.body) {
            PartType::Text(text) => {
                let text = sink.take_text(text);
                words::push_text(sink, "", text);
            }
            PartType::Html(markup) => {
                let markup = sink.take_text(markup);
                let page = html::html_to_text(markup);
                words::push_text(sink, "", &page.text);
                for target in &page.urls {
                    url::push_url(sink, target);
                }
                if sink.config().html_tags {
                    for tag in &page.tags {
                        sink.push_joined(&["html:", capped(tag)]);
                    }
                }
            }
            PartType::Message(inner) if depth < MAX_MESSAGE_DEPTH => {
                push_message(sink, inner, depth + 1);
            }
            PartType::Binary(_) | PartType::InlineBinary(_) | PartType::Message(_) => {}
            PartType::Multipart(_) => {}
        }
    }
}

/// Second chance for a part mail-parser could not decode and handed over as raw text. Its
/// decoder gives up on a base64 body whose multipart never closes (common in spam); here the
/// body is decoded leniently, up to the first boundary line, then converted from its charset.
fn redecode<'x>(part: &MessagePart<'_>, raw: &str) -> Option<PartType<'x>> {
    let encoding = part
        .content_transfer_encoding()?
        .trim()
        .to_ascii_lowercase();
    let body: Vec<&str> = raw.lines().take_while(|l| !l.starts_with("--")).collect();
    let bytes = match encoding.as_str() {
        "base64" => {
            let clean: Vec<u8> = body
                .iter()
                .flat_map(|l| l.bytes())
                .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
                .collect();
            guard::parser(|| base64::base64_decode(&clean))?
        }
        "quoted-printable" => {
            let body = body.join("\n");
            guard::parser(|| quoted_printable::quoted_printable_decode(body.as_bytes()))?
        }
        _ => return None,
    };
    let charset = part.content_type().and_then(|ct| ct.attribute("charset"));
    let text = charset
        .and_then(|c| {
            guard::parser(|| charsets::map::charset_decoder(c.as_bytes()).map(|d| d(&bytes)))
        })
        .unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
    let is_html = part
        .content_type()
        .is_some_and(|ct| ct.subtype().is_some_and(|s| s.eq_ignore_ascii_case("html")));
    let text = Cow::Owned(text);
    Some(if is_html {
        PartType::Html(text)
    } else {
        PartType::Text(text)
    })
}

/// Second chance for an HTML part whose Content-Type names no charset, so mail-parser read it
/// as UTF-8 and lost its non-UTF-8 bytes: the charset its own `<meta ... charset=X>` declares
/// (common in spam written in KOI8-R, GB2312, Shift_JIS ...) decodes the raw part instead.
fn meta_charset<'x>(message: &Message<'_>, part: &MessagePart<'_>) -> Option<PartType<'x>> {
    if part
        .content_type()
        .is_some_and(|ct| ct.attribute("charset").is_some())
    {
        return None;
    }
    let raw = message
        .raw_message
        .get(part.offset_body as usize..part.offset_end as usize)?;
    let bytes = match part.encoding {
        Encoding::None => raw.to_vec(),
        Encoding::QuotedPrintable => {
            guard::parser(|| quoted_printable::quoted_printable_decode(raw))?
        }
        Encoding::Base64 => {
            let clean: Vec<u8> = raw
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            guard::parser(|| base64::base64_decode(&clean))?
        }
    };
    let head = &bytes[..bytes.len().min(4096)];
    let at = head
        .windows(8)
        .position(|w| w.eq_ignore_ascii_case(b"charset="))?
        + 8;
    let name: Vec<u8> = head[at..]
        .iter()
        .copied()
        .skip_while(|&b| b == b'"' || b == b'\'')
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
        .collect();
    let text = guard::parser(|| charsets::map::charset_decoder(&name).map(|d| d(&bytes)))?;
    Some(PartType::Html(Cow::Owned(text)))
}
