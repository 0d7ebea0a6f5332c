//! Serde adapters that store numeric arrays as one little-endian byte string. bincode would
//! otherwise encode (and, worse, decode) them element by element; as bytes they load in one
//! bounds-checked pass, which keeps model loading cheap for the one-process-per-message filter.

use serde::{Deserializer, Serializer};

macro_rules! packed {
    ($name:ident, $t:ty) => {
        /// `#[serde(with = ...)]` adapter for a vector of this element type.
        pub mod $name {
            use super::*;
            const SIZE: usize = std::mem::size_of::<$t>();

            /// Writes the elements as one byte string.
            pub fn serialize<S: Serializer>(values: &[$t], s: S) -> Result<S::Ok, S::Error> {
                let mut bytes = Vec::with_capacity(values.len() * SIZE);
                for v in values {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
                s.serialize_bytes(&bytes)
            }

            /// Reads a byte string back; its length must be a multiple of the element size.
            /// Converts straight from the decoder's buffer: one pass, no intermediate copy.
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<$t>, D::Error> {
                struct Elements;
                impl<'de> serde::de::Visitor<'de> for Elements {
                    type Value = Vec<$t>;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a packed little-endian array")
                    }
                    fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Vec<$t>, E> {
                        if bytes.len() % SIZE != 0 {
                            return Err(E::custom(
                                "packed array length is not a whole number of elements",
                            ));
                        }
                        Ok(bytes
                            .chunks_exact(SIZE)
                            .map(|c| {
                                <$t>::from_le_bytes(c.try_into().expect("chunk has element size"))
                            })
                            .collect())
                    }
                    fn visit_byte_buf<E: serde::de::Error>(
                        self,
                        bytes: Vec<u8>,
                    ) -> Result<Vec<$t>, E> {
                        self.visit_bytes(&bytes)
                    }
                }
                d.deserialize_bytes(Elements)
            }
        }
    };
}

packed!(u32s, u32);
packed!(f64s, f64);

#[cfg(test)]
mod tests {
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Arrays {
        #[serde(with = "super::u32s")]
        a: Vec<u32>,
        #[serde(with = "super::f64s")]
        b: Vec<f64>,
    }

    #[test]
    fn round_trip() {
        let x = Arrays {
            a: vec![1, u32::MAX, 0],
            b: vec![-0.5, f64::MAX, 1e-300],
        };
        let cfg = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&x, cfg).unwrap();
        let (y, _): (Arrays, _) = bincode::serde::decode_from_slice(&bytes, cfg).unwrap();
        assert_eq!(x, y);
    }
}
