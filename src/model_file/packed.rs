//! Serde adapters that store numeric arrays as one little-endian byte string (in the model
//! file's postcard encoding: a varint byte count, then the elements, 4 or 8 bytes each;
//! [`reals`] writes the element size, one byte, before it).
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

/// `#[serde(with = ...)]` adapter for `f64` values stored losslessly in half the bytes where
/// they allow it: as `f32` (4 bytes each) when every value is one (see [`stored_f32`]), else as
/// `f64`. The element size (4 or 8) comes first, then the elements as one byte string;
/// [`Reals`] borrows them. A human-readable format gets the `f64` values.
pub mod reals {
    use super::*;
    use serde::Serialize;

    /// Writes the element size, then the values as `f32` if that loses nothing, else as `f64`.
    pub fn serialize<S: Serializer>(values: &[f64], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return s.collect_seq(values);
        }
        let narrow = values.iter().all(|&v| stored_f32(v) == v);
        let size: u8 = if narrow { 4 } else { 8 };
        let mut bytes = Vec::with_capacity(values.len() * usize::from(size));
        for &v in values {
            if narrow {
                bytes.extend_from_slice(&(v as f32).to_le_bytes());
            } else {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        (size, serde_bytes::Bytes::new(&bytes)).serialize(s)
    }

    /// Reads the values back as `f64`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        if d.is_human_readable() {
            return <Vec<f64> as serde::Deserialize>::deserialize(d);
        }
        let reals = <Reals<'_> as serde::Deserialize>::deserialize(d)?;
        // Allocated once at its length: collected through `filter_map` (no lower size bound)
        // the vector grew by doubling, and a model's 2^17 hashed weights then held twice
        // their memory, which a server under a 64 MiB address-space limit ran out of.
        let mut values = Vec::with_capacity(reals.len());
        reals.extend_into(&mut values);
        Ok(values)
    }
}

/// An array written by [`reals`], borrowed from a decoder's buffer and read element by
/// element as `f64`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reals<'a> {
    /// Stored as `f32`.
    Narrow(Packed<'a, f32>),
    /// Stored as `f64`.
    Wide(Packed<'a, f64>),
}

impl Reals<'_> {
    /// Appends every value to `out`, in one pass over the bytes.
    pub(crate) fn extend_into(&self, out: &mut Vec<f64>) {
        match self {
            Reals::Narrow(p) => out.extend(p.iter().map(f64::from)),
            Reals::Wide(p) => out.extend(p.iter()),
        }
    }
}

impl Elements<f64> for Reals<'_> {
    fn at(&self, i: usize) -> Option<f64> {
        match self {
            Reals::Narrow(p) => p.at(i).map(f64::from),
            Reals::Wide(p) => p.at(i),
        }
    }
    fn len(&self) -> usize {
        match self {
            Reals::Narrow(p) => p.len(),
            Reals::Wide(p) => p.len(),
        }
    }
}

/// The element size and number of [`Reals`] without their bytes: what a reader that fetches
/// a few of them from the file (see `crate::filter::hashed_weights`) decodes. postcard writes
/// a byte string's length as the same varint as a `u64` (on 64-bit targets, where `usize` is
/// one), so this reads the size byte and the length where [`Reals`] reads them; the elements
/// start right after, at the byte count the decoder used.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RealsHead {
    /// Bytes per element, 4 or 8.
    size: u8,
    /// Bytes of the elements.
    bytes: u64,
}

impl RealsHead {
    /// Number of elements.
    pub(crate) fn len(&self) -> u64 {
        self.bytes / u64::from(self.size)
    }

    /// Bytes of the elements.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes per element.
    pub(crate) fn size(&self) -> usize {
        usize::from(self.size)
    }

    /// Where element `i` (below [`RealsHead::len`]) lies, counted from the first element's
    /// first byte.
    pub(crate) fn range_of(&self, i: u64) -> std::ops::Range<u64> {
        let size = u64::from(self.size);
        i * size..(i + 1) * size
    }

    /// The element in exactly [`RealsHead::range_of`]'s bytes.
    pub(crate) fn element(&self, bytes: &[u8]) -> f64 {
        match self.size {
            4 => f64::from(f32::read(bytes)),
            _ => f64::read(bytes),
        }
    }
}

impl<'de> serde::Deserialize<'de> for RealsHead {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (size, bytes) = <(u8, u64)>::deserialize(d)?;
        if !matches!(size, 4 | 8) {
            return Err(serde::de::Error::custom(
                "packed reals of an unknown element size",
            ));
        }
        if !bytes.is_multiple_of(u64::from(size)) {
            return Err(serde::de::Error::custom(
                "packed array length is not a whole number of elements",
            ));
        }
        Ok(RealsHead { size, bytes })
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Reals<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (size, bytes) = <(u8, &'a [u8])>::deserialize(d)?;
        match size {
            4 => Packed::from_bytes(bytes).map(Reals::Narrow),
            8 => Packed::from_bytes(bytes).map(Reals::Wide),
            _ => Err("packed reals of an unknown element size"),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// `v` rounded to the nearest `f32`, clamped to `f32`'s finite range (a NaN stays NaN): a
/// value [`reals`] stores in 4 bytes.
pub(crate) fn stored_f32(v: f64) -> f64 {
    f64::from(v.clamp(-f64::from(f32::MAX), f64::from(f32::MAX)) as f32)
}

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
element!(u32, u64, f32, f64);

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

impl<'a, T: Element> Packed<'a, T> {
    /// The elements, in order.
    fn iter(&self) -> impl Iterator<Item = T> + use<'a, T> {
        self.bytes.chunks_exact(T::SIZE).map(T::read)
    }

    /// The bytes of the elements (where they lie in the buffer they were decoded from).
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The elements in `bytes`, whose length must be a whole number of them.
    pub(crate) fn from_bytes(bytes: &'a [u8]) -> Result<Self, &'static str> {
        if !bytes.len().is_multiple_of(T::SIZE) {
            return Err("packed array length is not a whole number of elements");
        }
        Ok(Packed {
            bytes,
            element: std::marker::PhantomData,
        })
    }
}

impl<'de: 'a, 'a, T: Element> serde::Deserialize<'de> for Packed<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Packed::from_bytes(<&'a [u8]>::deserialize(d)?).map_err(serde::de::Error::custom)
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

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Weights(#[serde(with = "super::reals")] Vec<f64>);

    #[test]
    fn reals_take_four_bytes_where_that_loses_nothing_and_round_trip_exactly() {
        use super::{Elements, Reals, stored_f32};
        let narrow = Weights(vec![0.5, -3.0, stored_f32(0.1), 0.0, f64::from(f32::MAX)]);
        let wide = Weights(vec![0.5, 0.1]);
        for (x, size) in [(&narrow, 4), (&wide, 8), (&Weights(Vec::new()), 4)] {
            let bytes = postcard::to_stdvec(x).unwrap();
            let n = x.0.len();
            assert_eq!(bytes.len(), 1 + 1 + n * size, "size byte, length, elements");
            assert_eq!(bytes[0], size as u8);
            assert_eq!(&postcard::from_bytes::<Weights>(&bytes).unwrap(), x);
            let view: Reals = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(view.len(), n);
            assert_eq!((0..=n).map(|i| view.at(i)).collect::<Vec<_>>(), {
                let mut v: Vec<_> = x.0.iter().copied().map(Some).collect();
                v.push(None);
                v
            });
            // The head alone: where each element lies after the two bytes it reads.
            let (head, rest): (super::RealsHead, _) = postcard::take_from_bytes(&bytes).unwrap();
            let start = (bytes.len() - rest.len()) as u64;
            assert_eq!((start, head.len()), (2, n as u64));
            for (i, &v) in x.0.iter().enumerate() {
                let r = head.range_of(i as u64);
                assert_eq!(r.end - r.start, size as u64);
                let at = (start + r.start) as usize..(start + r.end) as usize;
                assert_eq!(head.element(&bytes[at]), v);
            }
        }
        // A length that is no whole number of elements, and another size, are refused.
        for (size, len) in [(4u8, 6u64), (8, 4), (2, 2)] {
            let bad = postcard::to_stdvec(&(size, len)).unwrap();
            assert!(postcard::from_bytes::<super::RealsHead>(&bad).is_err());
        }
        // Rounding clamps to f32's finite range; another element size is refused.
        assert_eq!(stored_f32(1e300), f64::from(f32::MAX));
        assert_eq!(stored_f32(-1e300), -f64::from(f32::MAX));
        let bad = postcard::to_stdvec(&(2u8, serde_bytes::Bytes::new(&[0, 0]))).unwrap();
        assert!(postcard::from_bytes::<Weights>(&bad).is_err());
        // The human-readable form stays the f64 values.
        assert_eq!(serde_json::to_string(&wide).unwrap(), "[0.5,0.1]");
    }
}
