//! The mbox reader on arbitrary bytes: never a panic, always an end, and messages that only
//! ever lose bytes (framing lines, one `>` of escaped `From ` lines), each within the reader's
//! limit. The first input byte picks the variant and, in head mode, a small head (so the reading
//! of lines longer than the limit, in pieces, is exercised).
#![no_main]

use libfuzzer_sys::fuzz_target;
use spamsort::corpus::mbox::{MboxReader, MboxVariant};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, mbox)) = data.split_first() else {
        return;
    };
    let variant = if selector & 1 == 0 {
        MboxVariant::Rd
    } else {
        MboxVariant::O
    };
    let head = (selector & 2 != 0).then_some(u64::from(selector >> 2));
    let mut reader = MboxReader::new(std::io::Cursor::new(mbox), Path::new("fuzz.mbox"), variant);
    if let Some(head) = head {
        reader.set_head(head);
    }
    let mut total = 0;
    let mut count = 0;
    for message in reader {
        let message = message.expect("reading bytes in memory cannot fail");
        count += 1;
        assert_eq!(message.source.index, Some(count));
        if let Some(head) = head {
            assert!(message.bytes.len() as u64 <= head);
        }
        total += message.bytes.len();
        // Every message but an empty file's none takes at least one byte of input.
        assert!(count <= mbox.len());
    }
    assert!(total <= mbox.len());
});
