//! Serde adapters that store numeric arrays as one little-endian byte string (in the model
//! file's postcard encoding: a varint byte count, then the elements, 4 or 8 bytes each).
//! postcard would otherwise encode (and, worse, decode) them element by element, as varints;
//! as bytes they load in one bounds-checked pass, or are borrowed in place ([`Packed`]),
//! which keeps model loading cheap for the one-process-per-message filter.

use serde::{Deserializer, Serializer};

macro_rules! packed {
    ($name:ident, $t:ty) => {
        /// `#[serde(with = ...)]` adapter for a vector of this element type.
        pub mod $name {
            use super::*;
            const SIZE: usize = std::mem::size_of::<$t>();

            /// Writes the elements as one byte string (as a list of numbers in a
            /// human-readable format such as the JSON of `crate::filter::dump`).
            pub fn serialize<S: Serializer>(values: &[$t], s: S) -> Result<S::Ok, S::Error> {
                if s.is_human_readable() {
                    return s.collect_seq(values);
                }
                let mut bytes = Vec::with_capacity(values.len() * SIZE);
                for v in values {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
                s.serialize_bytes(&bytes)
            }

            /// Reads a byte string back; its length must be a multiple of the element size.
            /// Converts straight from the decoder's buffer: one pass, no intermediate copy.
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<$t>, D::Error> {
                if d.is_human_readable() {
                    return <Vec<$t> as serde::Deserialize>::deserialize(d);
                }
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
packed!(u64s, u64);

/// Read access by index to a numeric array, whether owned or borrowed as packed bytes.
/// Out-of-range indices give `None`, never a panic.
pub(crate) trait Elements<T> {
    /// Element `i`, if there is one.
    fn at(&self, i: usize) -> Option<T>;
    /// Number of elements.
    fn len(&self) -> usize;
}

impl<T: Copy> Elements<T> for [T] {
    fn at(&self, i: usize) -> Option<T> {
        self.get(i).copied()
    }
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
}

impl<T: Copy> Elements<T> for Vec<T> {
    fn at(&self, i: usize) -> Option<T> {
        self.get(i).copied()
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
}

/// A number stored little-endian in a packed array.
pub(crate) trait Element: Copy {
    /// Bytes per element.
    const SIZE: usize;
    /// Reads one element from exactly `SIZE` bytes.
    fn read(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn read(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("caller passes SIZE bytes"))
            }
        }
    )*};
}
element!(u32, u64, f64);

/// A packed array borrowed from a decoder's buffer (a model file in memory), decoded element
/// by element on access: loading costs nothing however large the array. Deserializes from
/// the same bytes the [`u32s`] and [`f64s`] adapters write.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Packed<'a, T> {
    bytes: &'a [u8],
    element: std::marker::PhantomData<T>,
}

impl<T: Element> Elements<T> for Packed<'_, T> {
    fn at(&self, i: usize) -> Option<T> {
        let start = i.checked_mul(T::SIZE)?;
        self.bytes.get(start..start + T::SIZE).map(T::read)
    }
    fn len(&self) -> usize {
        self.bytes.len() / T::SIZE
    }
}

impl<'de: 'a, 'a, T: Element> serde::Deserialize<'de> for Packed<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bytes = <&'a [u8]>::deserialize(d)?;
        if bytes.len() % T::SIZE != 0 {
            return Err(serde::de::Error::custom(
                "packed array length is not a whole number of elements",
            ));
        }
        Ok(Packed {
            bytes,
            element: std::marker::PhantomData,
        })
    }
}

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
        let bytes = postcard::to_stdvec(&x).unwrap();
        assert_eq!(
            bytes.len(),
            1 + 3 * 4 + 1 + 3 * 8,
            "a length byte, then the elements"
        );
        let y: Arrays = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(x, y);
    }

    #[test]
    fn borrowed_views_read_the_same_elements() {
        use super::{Elements, Packed};
        #[derive(serde::Deserialize)]
        struct View<'a> {
            #[serde(borrow)]
            a: Packed<'a, u32>,
            #[serde(borrow)]
            b: Packed<'a, f64>,
        }
        let x = Arrays {
            a: vec![1, u32::MAX, 0],
            b: vec![-0.5, f64::MAX],
        };
        let bytes = postcard::to_stdvec(&x).unwrap();
        let v: View = postcard::from_bytes(&bytes).unwrap();
        assert_eq!((v.a.len(), v.b.len()), (3, 2));
        assert_eq!(
            (0..4).map(|i| v.a.at(i)).collect::<Vec<_>>(),
            [Some(1), Some(u32::MAX), Some(0), None]
        );
        assert_eq!(
            (v.b.at(0), v.b.at(1), v.b.at(2)),
            (Some(-0.5), Some(f64::MAX), None)
        );
        // A length that is not a whole number of elements is refused.
        let odd = postcard::to_stdvec(&(
            serde_bytes::Bytes::new(&[1, 2, 3]),
            serde_bytes::Bytes::new(&[]),
        ))
        .unwrap();
        assert!(postcard::from_bytes::<View>(&odd).is_err());
    }
}
