//! The eight element types of the custom-op API, by the codes `c10::ScalarType` gives them
//! (sdk/include/c10/core/ScalarType.h), and their elements as numbers.

use std::fmt;

pub use crate::base::codes::DType;

/// As serde's derive writes a unit variant: its Rust name.
impl serde::Serialize for DType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{self:?}"))
    }
}

/// Its Rust name, as [`serde::Serialize`] writes it.
impl<'de> serde::Deserialize<'de> for DType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        DType::ALL
            .iter()
            .copied()
            .find(|t| format!("{t:?}") == name)
            .ok_or_else(|| serde::de::Error::custom(format!("no element type is named {name}")))
    }
}

impl DType {
    /// Its row of facts ([`crate::base::codes::DTYPES`]).
    pub fn row(self) -> &'static crate::base::codes::DTypeRow {
        let rows = &crate::base::codes::DTYPES;
        rows.iter()
            .find(|r| r.dtype == self)
            .expect("a row for every element type")
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        self.row().size
    }

    /// Whether its elements are integers.
    pub fn is_integral(self) -> bool {
        self.row().integral
    }

    /// The name PyTorch prints (`torch.float32`'s short form).
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Element `i` of `bytes` (little-endian) as a number: integers exactly, floats widened.
    pub fn load(self, bytes: &[u8], i: usize) -> Num {
        let s = self.size();
        let b = &bytes[i * s..(i + 1) * s];
        let u16_at = || u16::from_le_bytes([b[0], b[1]]);
        match self {
            DType::Byte => Num::Int(i64::from(b[0])),
            DType::Char => Num::Int(i64::from(b[0] as i8)),
            DType::Short => Num::Int(i64::from(u16_at() as i16)),
            DType::Int => Num::Int(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            DType::Long => Num::Int(i64::from_le_bytes(b.try_into().expect("8 bytes"))),
            DType::Half => Num::Float(f64::from(half_to_f32(u16_at()))),
            DType::Float => Num::Float(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            DType::BFloat16 => Num::Float(f64::from(f32::from_bits(u32::from(u16_at()) << 16))),
        }
    }

    /// Stores `v` as element `i` of `bytes`: integers wrap (two's complement, as C++ and
    /// NumPy do), floats round to nearest even (a float becomes an integer by truncation).
    pub fn store(self, bytes: &mut [u8], i: usize, v: Num) {
        let s = self.size();
        let out = &mut bytes[i * s..(i + 1) * s];
        match self {
            DType::Half => out.copy_from_slice(&f32_to_half(v.as_f32()).to_le_bytes()),
            DType::Float => out.copy_from_slice(&v.as_f32().to_le_bytes()),
            DType::BFloat16 => out.copy_from_slice(&f32_to_bf16(v.as_f32()).to_le_bytes()),
            _ => out.copy_from_slice(&v.as_i64().to_le_bytes()[..s]),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One element's value, wide enough for every element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// An integer element (or integer scalar).
    Int(i64),
    /// A floating-point element (or scalar), in double precision.
    Float(f64),
}

impl Num {
    /// As a double (an integer converted).
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// As a float: a double rounds once, an integer converts directly (as C++ converts).
    pub fn as_f32(self) -> f32 {
        match self {
            Num::Int(i) => i as f32,
            Num::Float(f) => f as f32,
        }
    }

    /// As an integer: a float truncates toward zero (saturating, NaN to 0).
    pub fn as_i64(self) -> i64 {
        match self {
            Num::Int(i) => i,
            Num::Float(f) => f as i64,
        }
    }
}

/// binary16 bits to float (exact).
pub fn half_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: m * 2^-24.
            let v = m as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Float to binary16 bits, rounding to nearest even; NaN stays NaN.
pub fn f32_to_half(f: f32) -> u16 {
    let x = f.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    let abs = x & 0x7fff_ffff;
    if abs > 0x7f80_0000 {
        return sign | 0x7e00 | ((abs >> 13) & 0x3ff) as u16;
    }
    if abs >= 0x4780_0000 {
        // 65520 and above round to infinity.
        return sign | 0x7c00;
    }
    if abs < 0x3880_0000 {
        // Below 2^-14: a subnormal (or zero); scale to units of 2^-24 and round.
        let v = f32::from_bits(abs) * f32::from_bits(0x4b80_0000); // * 2^24
        return sign | round_half_even(v) as u16;
    }
    let mant = abs & 0x007f_ffff;
    let exp = (abs >> 23) - 112;
    let mut h = (exp << 10) | (mant >> 13);
    let rest = mant & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h += 1;
    }
    sign | h as u16
}

fn round_half_even(v: f32) -> u32 {
    let t = v.trunc();
    let frac = v - t;
    let t = t as u32;
    if frac > 0.5 || (frac == 0.5 && t & 1 == 1) {
        t + 1
    } else {
        t
    }
}

/// Float to bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN.
pub fn f32_to_bf16(f: f32) -> u16 {
    let x = f.to_bits();
    if f.is_nan() {
        return ((x >> 16) | 0x40) as u16;
    }
    let round = 0x7fff + ((x >> 16) & 1);
    (x.wrapping_add(round) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_type_in_order() {
        let rows: Vec<DType> = crate::base::codes::DTYPES.iter().map(|r| r.dtype).collect();
        assert_eq!(rows, DType::ALL);
        for &d in DType::ALL {
            assert_eq!(d.row().dtype, d);
        }
    }

    #[test]
    fn half_round_trips_every_value_and_rounds_ties_to_even() {
        for h in 0..=u16::MAX {
            let f = half_to_f32(h);
            if f.is_nan() {
                assert!(half_to_f32(f32_to_half(f)).is_nan());
            } else {
                assert_eq!(f32_to_half(f), h, "{h:#06x}");
            }
        }
        // 1 + 2^-11 lies halfway between 1 and the next half: even (1) wins.
        assert_eq!(f32_to_half(1.0 + f32::powi(2.0, -11)), 0x3c00);
        assert_eq!(f32_to_half(1.0 + 3.0 * f32::powi(2.0, -11)), 0x3c02);
        assert_eq!(f32_to_half(65520.0), 0x7c00);
        assert_eq!(f32_to_half(65519.0), 0x7bff);
    }

    #[test]
    fn bfloat16_rounds_ties_to_even() {
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8001)), 0x3f81);
    }

    #[test]
    fn integers_wrap_when_stored_narrower() {
        let mut b = [0u8; 2];
        DType::Char.store(&mut b, 0, Num::Int(130));
        assert_eq!(DType::Char.load(&b, 0), Num::Int(-126));
        DType::Short.store(&mut b, 0, Num::Float(-3.9));
        assert_eq!(DType::Short.load(&b, 0), Num::Int(-3));
    }
}
