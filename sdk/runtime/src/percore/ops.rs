//! The tensor operations of `<torch/torch.h>`, element by element over HBM, with the
//! element-type rules docs/customop-host.md tables: operands of one shape (no
//! broadcasting) and, for two tensors, one element type; floating-point results in the
//! element type's own precision (float arithmetic for float, half and bfloat16 computed in
//! float and rounded to nearest even; the functions in double, rounded once); integers wrap.

use crate::base::dtype::{DType, Num};
use crate::base::misuse::Kind;
use crate::percore::error::{CoreError, TypeRule};
use crate::percore::state::Runtime;
use crate::percore::tensors;

pub use crate::base::codes::{Fill, Op};

/// An operand: a tensor (by handle) or a scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    /// Not given.
    None,
    /// A tensor.
    Tensor(u32),
    /// A scalar.
    Scalar(Num),
}

/// What an operation is given: its first operand, its second, and a third (`clamp`'s max,
/// `add`'s and `sub`'s alpha).
#[derive(Debug, Clone, Copy)]
pub struct Application {
    /// The operation.
    pub op: Op,
    /// Its operands.
    pub args: [Operand; 3],
}

fn is_unary_float(op: Op) -> bool {
    matches!(
        op,
        Op::Sin | Op::Cos | Op::Tan | Op::Log | Op::Log2 | Op::Log10 | Op::Exp
    )
}

/// The element type of the result, or why the operands are refused.
pub fn result_dtype(call: &Application, dtypes: [Option<DType>; 2]) -> Result<DType, CoreError> {
    let op = call.op;
    let t = match dtypes {
        [Some(a), Some(b)] if a != b => return Err(CoreError::Types(TypeRule::Differ(a, b))),
        [Some(a), _] | [None, Some(a)] => a,
        [None, None] => return Err(CoreError::Types(TypeRule::NoTensor)),
    };
    let float_scalar = call.args[..2]
        .iter()
        .any(|a| matches!(a, Operand::Scalar(Num::Float(_))));
    match op {
        Op::BitwiseAnd | Op::BitwiseOr | Op::BitwiseNot if !t.is_integral() => {
            Err(CoreError::Types(TypeRule::IntegerTensors {
                op: op.name(),
                dtype: t,
            }))
        }
        Op::BitwiseAnd | Op::BitwiseOr if float_scalar => {
            Err(CoreError::Types(TypeRule::IntegerScalar(op.name())))
        }
        Op::Add | Op::Sub
            if t.is_integral()
                && !float_scalar
                && matches!(call.args[2], Operand::Scalar(Num::Float(_))) =>
        {
            Err(CoreError::Types(TypeRule::FloatAlpha))
        }
        _ if is_unary_float(op) || op == Op::Div => {
            Ok(if t.is_integral() { DType::Float } else { t })
        }
        Op::Pow | Op::Add | Op::Sub | Op::Mul if t.is_integral() && float_scalar => {
            Ok(DType::Float)
        }
        _ => Ok(t),
    }
}

/// `op` on one element: its operands as numbers, in the result type `to`.
fn element(op: Op, a: Num, b: Num, c: Num, to: DType) -> Result<Num, CoreError> {
    if to.is_integral() {
        let (x, y, z) = (a.as_i64(), b.as_i64(), c.as_i64());
        return Ok(Num::Int(match op {
            Op::Abs => x.wrapping_abs(),
            Op::Ceil | Op::Floor => x,
            Op::Pow if y < 0 => return Err(CoreError::NegativePower),
            Op::Pow => ipow(x, y as u64),
            Op::Clamp => x.max(y).min(z),
            Op::Add => x.wrapping_add(z.wrapping_mul(y)),
            Op::Sub => x.wrapping_sub(z.wrapping_mul(y)),
            Op::Mul => x.wrapping_mul(y),
            Op::BitwiseAnd => x & y,
            Op::BitwiseOr => x | y,
            Op::BitwiseNot => !x,
            _ => unreachable!("float-valued ops have float results"),
        }));
    }
    let (x, y, z) = (a.as_f32(), b.as_f32(), c.as_f32());
    let wide = |f: fn(f64) -> f64| f(f64::from(x)) as f32;
    Ok(Num::Float(f64::from(match op {
        Op::Abs => x.abs(),
        Op::Ceil => x.ceil(),
        Op::Floor => x.floor(),
        Op::Sin => wide(f64::sin),
        Op::Cos => wide(f64::cos),
        Op::Tan => wide(f64::tan),
        Op::Log => wide(f64::ln),
        Op::Log2 => wide(f64::log2),
        Op::Log10 => wide(f64::log10),
        Op::Exp => wide(f64::exp),
        Op::Pow => f64::from(x).powf(f64::from(y)) as f32,
        Op::Clamp => clamp_f32(x, y, z),
        Op::Add => x + z * y,
        Op::Sub => x - z * y,
        Op::Mul => x * y,
        Op::Div => x / y,
        Op::BitwiseAnd | Op::BitwiseOr | Op::BitwiseNot => unreachable!("integer-only ops"),
    })))
}

fn clamp_f32(x: f32, lo: f32, hi: f32) -> f32 {
    if x.is_nan() {
        x
    } else {
        x.max(lo).min(hi)
    }
}

fn ipow(mut base: i64, mut exp: u64) -> i64 {
    let mut r: i64 = 1;
    while exp > 0 {
        if exp & 1 == 1 {
            r = r.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    r
}

/// Shape and element type of a tensor operand.
fn shape_of(rt: &mut Runtime, h: u32) -> (Vec<i64>, DType) {
    let e = rt.entry(h);
    (e.meta.sizes[..e.meta.ndim as usize].to_vec(), e.dtype)
}

/// Runs `call`, into `out` (the `_out` form) or a new tensor: the result's handle (a new
/// one with one reference; `out` itself for the `_out` form). A refusal is reported
/// (operation-error, naming the operation and the shapes or types) and stops the core.
pub fn apply(rt: &mut Runtime, call: Application, out: Option<u32>) -> u32 {
    let name = call.op.name();
    let tensors: Vec<u32> = call.args[..2]
        .iter()
        .filter_map(|a| match a {
            Operand::Tensor(h) => Some(*h),
            _ => None,
        })
        .collect();
    let shapes: Vec<(Vec<i64>, DType)> = tensors.iter().map(|h| shape_of(rt, *h)).collect();
    if shapes.len() == 2 && shapes[0].0 != shapes[1].0 {
        let d = format!(
            "{name}: shapes {:?} and {:?} differ (no broadcasting)",
            shapes[0].0, shapes[1].0
        );
        rt.misuse(Kind::OpFailed, Some(tensors[1]), None, d);
    }
    let dtypes = [shapes.first().map(|s| s.1), shapes.get(1).map(|s| s.1)];
    let to = match result_dtype(&call, dtypes) {
        Ok(t) => t,
        Err(why) => {
            rt.misuse(
                Kind::OpFailed,
                tensors.first().copied(),
                None,
                format!("{name}: {why}"),
            );
            return 0;
        }
    };
    let sizes = shapes[0].0.clone();
    let out = match out {
        Some(o) => {
            let (osizes, odtype) = shape_of(rt, o);
            if osizes != sizes || odtype != to {
                let d = format!("{name}_out: the result tensor is {osizes:?} {odtype}, the operation gives {sizes:?} {to}");
                rt.misuse(Kind::OpFailed, Some(o), None, d);
            }
            o
        }
        None => tensors::create(rt, to, &sizes, false),
    };
    compute(rt, call, &tensors, &shapes, to, out);
    out
}

fn compute(
    rt: &mut Runtime,
    call: Application,
    tensors: &[u32],
    shapes: &[(Vec<i64>, DType)],
    to: DType,
    out: u32,
) {
    let data: Vec<Vec<u8>> = tensors.iter().map(|h| tensors::read_all(rt, *h)).collect();
    let n = usize::try_from(rt.entry(out).meta.numel).unwrap_or(usize::MAX);
    let mut result = vec![0u8; n * to.size()];
    for i in 0..n {
        let mut k = 0;
        let mut nums = [Num::Int(0); 3];
        for (slot, a) in nums.iter_mut().zip(&call.args) {
            *slot = match a {
                Operand::Tensor(_) => {
                    k += 1;
                    shapes[k - 1].1.load(&data[k - 1], i)
                }
                Operand::Scalar(v) => *v,
                // add's and sub's alpha defaults to 1.
                Operand::None => Num::Int(1),
            };
        }
        match element(call.op, nums[0], nums[1], nums[2], to) {
            Ok(v) => to.store(&mut result, i, v),
            Err(why) => {
                let d = format!("{}: {why}", call.op.name());
                rt.misuse(
                    Kind::OpFailed,
                    tensors.first().copied(),
                    Some(i.to_string()),
                    d,
                );
                return;
            }
        }
    }
    tensors::write_all(rt, out, &result);
}

/// A factory: a new tensor of element type `d` and `sizes`, filled as `fill` says. Its
/// handle (one reference), 0 after a reported misuse (`full` without a scalar).
pub fn factory(rt: &mut Runtime, d: DType, sizes: &[i64], fill: Fill, value: Operand) -> u32 {
    if fill == Fill::Value && !matches!(value, Operand::Scalar(_)) {
        rt.misuse(Kind::OpFailed, None, None, "full takes a scalar".into());
        return 0;
    }
    // A shape function's tensors are shapes: no storage, nothing to fill.
    let data_less = rt.job.phase == crate::percore::state::Phase::Shape;
    let h = tensors::create(rt, d, sizes, data_less);
    match (fill, value) {
        (Fill::Zeros, _) => tensors::fill(rt, h, Num::Int(0)),
        (Fill::Ones, _) => tensors::fill(rt, h, Num::Int(1)),
        (Fill::Value, Operand::Scalar(v)) => tensors::fill(rt, h, v),
        (Fill::Eye, _) => tensors::eye(rt, h),
        _ if rt.job.phase == crate::percore::state::Phase::Kernel && h != 0 => {
            tensors::track(rt, h)
        }
        _ => {}
    }
    h
}

/// `fill_(value)` on tensor `h`: a scalar, or a reported misuse.
pub fn fill_with(rt: &mut Runtime, h: u32, value: Operand) {
    match value {
        Operand::Scalar(n) => tensors::fill(rt, h, n),
        _ => rt.misuse(Kind::OpFailed, Some(h), None, "fill_ takes a scalar".into()),
    }
}

#[cfg(test)]
mod tests {
    //! The type rules and the element maths, each on its own (check_ops.py holds every
    //! operation against NumPy on every type through the runner).
    use super::*;

    fn call(op: Op, a: Operand, b: Operand, c: Operand) -> Application {
        Application {
            op,
            args: [a, b, c],
        }
    }

    const T: Operand = Operand::Tensor(1);
    const N: Operand = Operand::None;
    const I2: Operand = Operand::Scalar(Num::Int(2));
    const F2: Operand = Operand::Scalar(Num::Float(2.5));

    #[test]
    fn result_types_follow_the_documented_rules() {
        let int = Some(DType::Int);
        let ty = |c: Application, d: [Option<DType>; 2]| result_dtype(&c, d);
        assert_eq!(ty(call(Op::Add, T, T, I2), [int, int]), Ok(DType::Int));
        assert_eq!(ty(call(Op::Mul, T, F2, N), [int, None]), Ok(DType::Float));
        assert_eq!(ty(call(Op::Div, T, T, N), [int, int]), Ok(DType::Float));
        assert_eq!(ty(call(Op::Sin, T, N, N), [int, None]), Ok(DType::Float));
        assert_eq!(
            ty(call(Op::Abs, T, N, N), [Some(DType::Half), None]),
            Ok(DType::Half)
        );
        let refused = [
            (
                call(Op::Add, T, T, N),
                [int, Some(DType::Float)],
                "element types differ",
            ),
            (
                call(Op::BitwiseAnd, T, T, N),
                [Some(DType::Float); 2],
                "takes integer tensors",
            ),
            (call(Op::BitwiseOr, T, F2, N), [int, None], "integer scalar"),
            (call(Op::Add, T, T, F2), [int, int], "floating-point alpha"),
            (call(Op::Abs, I2, N, N), [None, None], "no tensor operand"),
        ];
        for (c, d, why) in refused {
            let got = ty(c, d);
            assert!(
                got.as_ref()
                    .is_err_and(|m| matches!(m, CoreError::Types(_)) && m.to_string().contains(why)),
                "{c:?}: {got:?}"
            );
        }
    }

    #[test]
    fn element_maths_wraps_integers_and_keeps_floats_ieee() {
        let el = |op, a: i64, b: i64, c: i64| {
            element(op, Num::Int(a), Num::Int(b), Num::Int(c), DType::Int)
        };
        assert_eq!(el(Op::Add, i64::MAX, 1, 1), Ok(Num::Int(i64::MIN)));
        assert_eq!(
            el(Op::Sub, 10, 3, 2),
            Ok(Num::Int(4)),
            "alpha scales the second"
        );
        assert_eq!(el(Op::Pow, 3, 4, 0), Ok(Num::Int(81)));
        assert!(
            el(Op::Pow, 3, -1, 0).is_err(),
            "a negative integer power is refused"
        );
        assert_eq!(el(Op::Clamp, 9, 0, 5), Ok(Num::Int(5)));
        assert_eq!(el(Op::BitwiseNot, 0, 0, 0), Ok(Num::Int(-1)));
        let fl = |op, a: f64, b: f64, c: f64| {
            element(
                op,
                Num::Float(a),
                Num::Float(b),
                Num::Float(c),
                DType::Float,
            )
        };
        assert_eq!(fl(Op::Div, 1.0, 0.0, 0.0), Ok(Num::Float(f64::INFINITY)));
        assert_eq!(fl(Op::Add, 1.5, 2.0, 0.5), Ok(Num::Float(2.5)));
        let Ok(Num::Float(nan)) = fl(Op::Clamp, f64::NAN, 0.0, 1.0) else {
            panic!("clamp of NaN is a float")
        };
        assert!(nan.is_nan(), "clamp keeps NaN");
        assert_eq!(fl(Op::Floor, -0.5, 0.0, 0.0), Ok(Num::Float(-1.0)));
    }
}
