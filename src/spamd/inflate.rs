//! Bounded zlib decompression of a `Compress: zlib` request body (what `spamc -z` sends):
//! the message is decompressed to at most the server's `--max-size` bytes, so a zlib bomb
//! costs no more memory than a plain message may, and corrupt data is an error, never a panic.

use super::protocol::{ProtocolError, Status};
use flate2::{Decompress, FlushDecompress, Status as ZStatus};

/// Output is grown by at most this many bytes at a time, so a small message never reserves
/// `--max-size` bytes up front.
const STEP: u64 = 1 << 16;

/// Decompresses one whole zlib stream (RFC 1950, as zlib's `compress2` writes it) of at most
/// `limit` bytes of output. A stream that would inflate past `limit` is refused
/// `EX_DATAERR` as soon as it passes it; data that is not exactly one complete zlib stream
/// (corrupt, truncated, or followed by other bytes) is refused `EX_PROTOCOL`.
pub(super) fn inflate(compressed: &[u8], limit: u64) -> Result<Vec<u8>, ProtocolError> {
    let corrupt = |why: &str| ProtocolError::protocol(format!("Compress: zlib body {why}"));
    let too_big = || ProtocolError {
        status: Status::DataErr,
        message: format!("the message inflates to over the server's --max-size of {limit} bytes"),
    };
    let mut z = Decompress::new(true);
    let mut out = Vec::new();
    loop {
        if out.len() == out.capacity() {
            if out.len() as u64 > limit {
                return Err(too_big());
            }
            // Room for one byte past the limit tells a message of exactly `limit` bytes
            // from a longer one.
            out.reserve_exact((limit + 1 - out.len() as u64).min(STEP) as usize);
        }
        let (read, written) = (z.total_in(), z.total_out());
        let input = &compressed[read as usize..];
        let status = z
            .decompress_vec(input, &mut out, FlushDecompress::None)
            .map_err(|e| corrupt(&format!("is not valid zlib data ({e})")))?;
        if status == ZStatus::StreamEnd {
            break;
        }
        // Output has room, so no progress means the input ran out before the stream's end.
        if z.total_in() == read && z.total_out() == written {
            return Err(corrupt("ends before its zlib stream does"));
        }
    }
    if out.len() as u64 > limit {
        return Err(too_big());
    }
    if (z.total_in() as usize) < compressed.len() {
        return Err(corrupt("has bytes after its zlib stream"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::ZlibEncoder;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn zlib_body_round_trips_up_to_exactly_the_limit() {
        let message = b"Subject: hi\r\n\r\nbody\r\n".repeat(10_000);
        let packed = zlib(&message);
        assert!(packed.len() < message.len() / 10);
        assert_eq!(inflate(&packed, message.len() as u64).unwrap(), message);
        assert_eq!(inflate(&zlib(b""), 0).unwrap(), b"");
    }

    #[test]
    fn zlib_bomb_is_refused_data_err_past_the_limit() {
        let bomb = zlib(&vec![0u8; 64 << 20]);
        assert!(bomb.len() < 100 << 10);
        let e = inflate(&bomb, 1 << 20).unwrap_err();
        assert_eq!(e.status, Status::DataErr, "{}", e.message);
        let e = inflate(&zlib(b"12345"), 4).unwrap_err();
        assert_eq!(e.status, Status::DataErr, "{}", e.message);
    }

    #[test]
    fn corrupt_truncated_or_trailing_zlib_body_is_a_protocol_error() {
        let packed = zlib(&b"Subject: hi\r\n\r\nbody\r\n".repeat(100));
        let mut flipped = packed.clone();
        flipped[packed.len() / 2] ^= 0xff;
        let mut trailing = packed.clone();
        trailing.extend(b"junk");
        let cases: [&[u8]; 5] = [
            b"not zlib at all",
            b"",
            &packed[..packed.len() - 3],
            &flipped,
            &trailing,
        ];
        for case in cases {
            let e = inflate(case, 1 << 20).unwrap_err();
            assert_eq!(e.status, Status::Protocol, "{}", e.message);
        }
    }
}
