//! X-Spam-* stamping on arbitrary bytes: the output minus the two added lines is the input
//! minus spamsort's owned fields, byte for byte (the input itself where removing them would
//! merge a lone CR with an LF); each added field is in the header section (up to the first
//! blank line) exactly once (but for such kept ones); everything from that blank line on is
//! the same bytes; and stamping a head (as the streaming `filter` does) then appending the rest
//! gives the same bytes as stamping the whole. The same with a header prefix and a subject tag
//! (`stamp::mark`): setting the marks aside gives the input with them set aside, everything
//! from the blank line on is unchanged, and head-then-rest is the whole. Marking never changes
//! the message's kind of line ends (a lone CR is one only in a message without LF), so the
//! tokenizer reads the copy as the original. Lines are read as marking reads them (a lone CR
//! ends one in any message).
#![no_main]

use libfuzzer_sys::fuzz_target;
use spamsort::corpus::header_block::{LineEnds, envelope_len, field_name, lines};
use spamsort::filter::stamp::{
    Extent, Stamp, Unmarkable, add_header_lines, add_header_lines_to_head, header_section_len,
    mark, strip_owned_fields, unmarked,
};

const FLAG: &[u8] = b"X-Spam-Flag: YES";
const STATUS: &[u8] = b"X-Spam-Status: Yes, score=1.000";

fn added() -> Vec<String> {
    [FLAG, STATUS]
        .iter()
        .map(|l| String::from_utf8(l.to_vec()).unwrap())
        .collect()
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks where a streaming reader's head would end.
    let Some((&split, message)) = data.split_first() else {
        return;
    };
    let whole = add_header_lines(message, &added());
    if let Ok(out) = &whole {
        assert_eq!(LineEnds::of(out), LineEnds::of(message));
        let at = envelope_len(out, LineEnds::LfOrCr);
        let mut rest = lines(&out[at..], LineEnds::LfOrCr);
        let (flag, status) = (rest.next().unwrap(), rest.next().unwrap());
        let eol = &flag[FLAG.len()..];
        assert_eq!(flag, [FLAG, eol].concat());
        assert_eq!(status, [STATUS, eol].concat());
        let without = [&out[..at], &out[at + flag.len() + status.len()..]].concat();
        let stripped = strip_owned_fields(message);
        let kept_all = without == message && without != stripped;
        assert!(without == stripped || kept_all);
        assert_eq!(
            &out[header_section_len(out)..],
            &message[header_section_len(message)..]
        );
        let head = &out[..header_section_len(out)];
        for name in [&b"X-Spam-Flag"[..], b"X-Spam-Status"] {
            let count = lines(head, LineEnds::LfOrCr)
                .filter(|l| field_name(l).is_some_and(|n| n.eq_ignore_ascii_case(name)))
                .count();
            assert!(count == 1 || kept_all && count > 1);
        }
    }
    let k = message.len() * usize::from(split) / 255;
    match add_header_lines_to_head(&message[..k], &added()) {
        Ok(head) => assert_eq!(Ok([&head[..], &message[k..]].concat()), whole),
        Err(Unmarkable::HeaderBlockTooLong { head }) => assert_eq!(head, k),
        Err(why) => assert_eq!(Err(why), whole),
    }
    tagged(message, k);
});

/// The prefix-and-tag stamp on `message`, and on its first `k` bytes.
fn tagged(message: &[u8], k: usize) {
    let owned = vec!["X-Spamsort-Flag".to_string(), "X-Bogosity".to_string()];
    let stamp = Stamp {
        lines: vec![
            "X-Spamsort-Flag: YES".into(),
            "X-Bogosity: Spam,\n\ttests=x".into(),
        ],
        owned: owned.clone(),
        subject_tag: Some("***SPAM***".into()),
    };
    let whole = mark(message, &stamp, Extent::WholeMessage);
    if let Ok(out) = &whole {
        let tag = Some("***SPAM***");
        assert_eq!(unmarked(out, &owned, tag), unmarked(message, &owned, tag));
        assert_eq!(
            &out[header_section_len(out)..],
            &message[header_section_len(message)..]
        );
    }
    match mark(&message[..k], &stamp, Extent::Head) {
        Ok(head) => assert_eq!(Ok([&head[..], &message[k..]].concat()), whole),
        Err(Unmarkable::HeaderBlockTooLong { head }) => assert_eq!(head, k),
        Err(why) => assert_eq!(Err(why), whole),
    }
}
