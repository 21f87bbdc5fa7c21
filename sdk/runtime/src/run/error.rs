//! What a run refuses or cannot do, each with its reason in words.

use std::path::PathBuf;

use crate::base::codes::DeviceRequest;
use crate::base::limits::MAX_OPS;

/// An error of the run layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum RunError {
    /// The runner's options are refused: nothing runs (exit status `ExitStatus::Refused`,
    /// as for each refusal below).
    #[error("{0}")]
    Usage(Usage),
    /// The op asked for cannot be run from what the program registered.
    #[error("{0}")]
    Op(OpRefused),
    /// An argument on the command line is refused.
    #[error("{0}")]
    Argument(ArgRefused),
    /// `--profile`'s folder is refused before the run.
    #[error("{0}")]
    ProfileFolder(ProfileFolder),
    /// The output file cannot be reserved or written.
    #[error("{0}")]
    OutFile(OutFile),
    /// `--profile`'s files cannot be made.
    #[error("{0}")]
    Profile(ProfileError),
    /// The device program's request cannot be answered: its run ends with this.
    #[error("{0}")]
    Unanswered(Unanswered),
}

/// Why the runner's options are refused: its usage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum Usage {
    /// No op named.
    #[error(
        "usage: OP [ARG...] [--out FILE.npy] [--cores N] [--timeout SECONDS] [--stats[=json]]"
    )]
    NoOp,
    /// A core count or a timeout out of its range (sdk/common's words).
    #[error("{0}")]
    Limit(String),
    /// `--device` without `--translation`, or the other way round.
    #[error("--device and --translation go together")]
    DeviceAlone,
    /// `--profile` without `--device`.
    #[error("--profile counts a run on the emulated Q7: give --device too")]
    ProfileWithoutDevice,
    /// An option the runner does not have.
    #[error("{0}: not an option of the runner (--out FILE, --cores N, --timeout SECONDS, --sanitize, --stats, --stats=json, --device PROGRAM, --translation OBJECT, --profile DIR)")]
    Unknown(String),
    /// An option without its value: the option, and what it needs.
    #[error("{option} needs {what}")]
    NoValue { option: String, what: String },
}

/// Why the op asked for cannot be run from what the program registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum OpRefused {
    #[error("{count} ops registered: a library has at most {MAX_OPS}")]
    TooMany { count: usize },
    #[error("{} NEURON_LIBRARY blocks ({}): a program registers one library", libraries.len(), libraries.join(", "))]
    Libraries { libraries: Vec<String> },
    /// An op's name or kernel the device's codegen refuses (sdk/common's words).
    #[error("{0}")]
    Name(String),
    #[error("op '{op}' is registered twice (library {}): each m.def names an op once", libraries.join(", "))]
    Twice { op: String, libraries: Vec<String> },
    #[error("no op '{op}' is registered (registered: {})", known.join(", "))]
    Unknown { op: String, known: Vec<String> },
    #[error("op '{op}' names kernel '{kernel}', which is overloaded, and no overload is the declaration the device's build makes from the op's schema (const torch::Tensor& for a Tensor, int, float, const torch::Scalar&)")]
    NoOverload { op: String, kernel: String },
    #[error("op '{op}' names kernel '{kernel}', which the compute sources do not define (as a function of const torch::Tensor&, int, float and const torch::Scalar& returning torch::Tensor)")]
    NoKernel { op: String, kernel: String },
    #[error("kernel '{kernel}' is overloaded with the same parameter kinds twice: the registration cannot name one")]
    Ambiguous { kernel: String },
    #[error("kernel '{kernel}' takes ({}) but its shape function takes ({})", takes.join(", "), shape_takes.join(", "))]
    Params {
        kernel: String,
        takes: Vec<String>,
        shape_takes: Vec<String>,
    },
}

/// Why argument `k` on the command line (`text`, as given) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum ArgRefused {
    #[error("argument {k} is {i}: the kernel takes an int (32 bits, as the device's build declares it from the schema's int), which {i} does not fit")]
    IntTooWide { k: usize, i: i64 },
    #[error("argument {k} is a tensor: '{text}' is no file (give the path of a .npy file)")]
    NoFile { k: usize, text: String },
    /// The `.npy` file's refusal (the base layer's words).
    #[error("argument {k} ({text}): {why}")]
    Npy { k: usize, text: String, why: String },
    #[error(
        "argument {k} ({text}): shape {shape:?} is {}",
        crate::base::limits::past_limits()
    )]
    PastLimits {
        k: usize,
        text: String,
        shape: Vec<u64>,
    },
    #[error("argument {k} ('{text}'): the kernel takes an {param}")]
    NotInt {
        k: usize,
        text: String,
        param: String,
    },
    #[error("argument {k} ('{text}'): the kernel takes a double (a number within a double's range, nan, inf or -inf)")]
    NotDouble { k: usize, text: String },
    #[error("argument {k} ('{text}'): the kernel takes a Scalar (a number)")]
    NotScalar { k: usize, text: String },
}

/// Why `--profile DIR` is refused before the run (`why`: the system's reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum ProfileFolder {
    #[error("--profile {}: is not a folder (the profile is a folder of three files: profile.json, profile.txt, profile.svg)", dir.display())]
    NotAFolder { dir: PathBuf },
    #[error("--profile {}: is a link to nothing (the profile is a folder of three files)", dir.display())]
    Dangling { dir: PathBuf },
    #[error("--profile {}: cannot be read: {why}", dir.display())]
    Unreadable { dir: PathBuf, why: String },
    #[error("--profile {}: cannot make the folder: {why}", dir.display())]
    CannotMake { dir: PathBuf, why: String },
    #[error("--profile {}: names no folder", dir.display())]
    NoName { dir: PathBuf },
    #[error("--profile {}: cannot write in the folder: {why}", dir.display())]
    Unwritable { dir: PathBuf, why: String },
}

/// Why `--out` cannot be written (`why`: the system's reason, as it said it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum OutFile {
    #[error("--out {}: a link to nothing there: {why}", path.display())]
    Dangling { path: PathBuf, why: String },
    #[error("--out {}: is a folder", path.display())]
    Folder { path: PathBuf },
    #[error("--out {}: is not a regular file, a character device or a FIFO", path.display())]
    NotAFile { path: PathBuf },
    #[error("--out {}: names no file", path.display())]
    NoName { path: PathBuf },
    #[error("--out {}: cannot write there: {why}", path.display())]
    Unwritable { path: PathBuf, why: String },
    /// The output's bytes could not be written into place, after the run.
    #[error("cannot write {}: {why}", path.display())]
    Write { path: PathBuf, why: String },
}

/// Why `--profile`'s files cannot be made after the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum ProfileError {
    /// A file of the profile (or its folder) could not be written.
    #[error("cannot write {file}: {why}")]
    Write { file: String, why: String },
    /// inferno refused the flame graph.
    #[error("the flame graph: {0}")]
    FlameGraph(String),
    /// The counting plugin's profile lines are not what it writes.
    #[error("the counting plugin's profile lines do not read")]
    Unreadable,
    /// A block the profile counts but does not list.
    #[error("the profile names block {0}, which it does not list")]
    UnlistedBlock(u32),
    /// The profile's total is not the run's count of instructions.
    #[error("the profile's instructions ({profiled}) are not the count's ({counted})")]
    NotTheCount { profiled: u64, counted: u64 },
}

/// Why a request of the device program cannot be answered (run/device/answer.rs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum Unanswered {
    /// A code the protocol does not have.
    #[error("a request of unknown code {0}")]
    UnknownCode(u32),
    /// A payload shorter than its struct.
    #[error("a {request:?} request whose payload ends {bytes} bytes short (the program and the runner are from different SDKs?)")]
    Short {
        #[serde(with = "code")]
        request: DeviceRequest,
        bytes: usize,
    },
    /// A payload longer than its struct, where nothing follows it.
    #[error("a {request:?} request whose payload has {bytes} bytes past its fields (the program and the runner are from different SDKs?)")]
    Long {
        #[serde(with = "code")]
        request: DeviceRequest,
        bytes: usize,
    },
    /// The runner read a request as another struct than the protocol gives it.
    #[error("the runner read a {request:?} request as struct nt_device_{read}, which protocol.h does not give it (the runtime's bug)")]
    OtherStruct {
        #[serde(with = "code")]
        request: DeviceRequest,
        read: String,
    },
    /// A second START: the runner answers the one at the program's start.
    #[error("a START past start(), which answers every START")]
    StartAgain,
}

/// A request as its code, between a core's process and the runner.
mod code {
    use crate::base::codes::DeviceRequest;

    pub fn serialize<S: serde::Serializer>(r: &DeviceRequest, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(r.code())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<DeviceRequest, D::Error> {
        let c = <u32 as serde::Deserialize>::deserialize(d)?;
        DeviceRequest::from_code(c)
            .ok_or_else(|| serde::de::Error::custom(format!("no device request has code {c}")))
    }
}
