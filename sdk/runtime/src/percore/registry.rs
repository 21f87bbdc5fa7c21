//! The op registry: what `NEURON_LIBRARY` registers (each op's name, its shape function and
//! the name of its kernel) and the kernels the runner's glue binds by name. Each entry
//! carries its parameters' kinds, read from the C++ function's type, so the runner can
//! check a call against them.

use core::ffi::c_void;
use std::sync::Mutex;

pub use crate::base::codes::Param;

impl Param {
    /// The schema's kind it stands for: a kernel's `int` and `float` are the shape
    /// function's `int64_t` and `double` (the device's build declares the kernel so).
    pub fn schema(self) -> Param {
        match self {
            Param::Int32 => Param::Int,
            Param::Float32 => Param::Double,
            p => p,
        }
    }

    /// The kernel's parameter the device's build declares for this schema kind: a shape
    /// function's `int64_t` and `double` are the kernel's `int` and `float`.
    pub fn declared(self) -> Param {
        match self {
            Param::Int => Param::Int32,
            Param::Double => Param::Float32,
            p => p,
        }
    }

    /// Its C++ spelling.
    pub fn name(self) -> &'static str {
        match self {
            Param::Tensor => "torch::Tensor",
            Param::Int => "int64_t",
            Param::Double => "double",
            Param::Scalar => "torch::Scalar",
            Param::Int32 => "int",
            Param::Float32 => "float",
        }
    }
}

pub use crate::base::cabi::Invoker;

/// A callable C++ function.
#[derive(Debug, Clone)]
pub struct Function {
    /// The invoker its template made.
    pub invoker: Invoker,
    /// The function.
    pub function: *const c_void,
    /// Its parameters.
    pub params: Vec<Param>,
}

// SAFETY: plain code addresses.
unsafe impl Send for Function {}

/// One `m.def(op, &shape_fn, "kernel")`.
#[derive(Debug, Clone)]
pub struct OpDef {
    /// The library's name (`NEURON_LIBRARY`'s first argument).
    pub library: String,
    /// The op's name.
    pub name: String,
    /// The kernel's name.
    pub kernel: String,
    /// The shape function.
    pub shape: Function,
}

/// Everything registered in this program.
#[derive(Debug)]
pub struct Registry {
    /// Ops, in registration order.
    pub ops: Vec<OpDef>,
    /// Kernels by name.
    pub kernels: Vec<(String, Function)>,
    /// The C functions the kernels call that the device runtime lacks (ntx's glue).
    pub device_lacks: Vec<String>,
    /// The stack the build gives a core on the device, in bytes (ntx's glue).
    pub stack_bytes: u32,
    /// The build opted out of the device's compile (`--no-device-parity`, ntx's glue).
    pub parity_off: bool,
}

/// The program's registry.
static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    ops: Vec::new(),
    kernels: Vec::new(),
    device_lacks: Vec::new(),
    stack_bytes: crate::base::limits::STACK_DEFAULT,
    parity_off: false,
});

/// Runs `f` on the registry.
pub fn with<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    f(&mut REGISTRY.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Registers op `name` of library `library` with its shape function and kernel name.
pub fn register(library: String, name: String, kernel: String, shape: Function) {
    with(|r| {
        r.ops.push(OpDef {
            library,
            name,
            kernel,
            shape,
        })
    });
}

/// Binds kernel function `name`.
pub fn bind(name: String, f: Function) {
    with(|r| r.kernels.push((name, f)));
}

impl Registry {
    /// The functions bound under op `def`'s kernel name, narrowed where the name is
    /// overloaded (a helper of the kernel's name, or overloaded kernels) to those whose
    /// parameters are the declaration the device's build makes from the op's schema: the
    /// overload the device's kernel call picks.
    pub fn kernels_of(&self, def: &OpDef) -> Vec<&Function> {
        let named: Vec<&Function> = self
            .kernels
            .iter()
            .filter(|k| k.0 == def.kernel)
            .map(|k| &k.1)
            .collect();
        if named.len() < 2 {
            return named;
        }
        let want: Vec<Param> = def.shape.params.iter().map(|p| p.declared()).collect();
        named.into_iter().filter(|f| f.params == want).collect()
    }
}

/// Op `op`'s shape function and kernel, as registered (the runner checked them).
pub fn kernel_name(op: &str) -> Option<String> {
    with(|r| Some(r.ops.iter().find(|o| o.name == op)?.kernel.clone()))
}

/// The shape function and the kernel of op `op`.
pub fn lookup(op: &str) -> Option<(Function, Function)> {
    with(|r| {
        let def = r.ops.iter().find(|o| o.name == op)?;
        let kernel = *r.kernels_of(def).first()?;
        Some((def.shape.clone(), kernel.clone()))
    })
}
