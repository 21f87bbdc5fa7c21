//! Why `ntx op build`, `run` and `schema` refused (op.rs, op_deps.rs, op_device.rs,
//! op_heap.rs): a variant per cause, carrying what a caller may act on (the program that did
//! not start, the file, the source and the compiler's words). Its words are the command's
//! message (exit 1, "refused before anything ran").

use std::path::PathBuf;

/// What a file operation was doing when it failed, in the message's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    Make,
    Open,
    Read,
    Write,
    Lock,
}

impl std::fmt::Display for FileAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileAction::Make => "make",
            FileAction::Open => "open",
            FileAction::Read => "read",
            FileAction::Write => "write",
            FileAction::Lock => "lock",
        })
    }
}

/// Why an `--out` cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutProblem {
    #[error("is a folder")]
    Folder,
    #[error("is not a regular file, a character device or a FIFO")]
    NotAFile,
    #[error("is not a regular file (the op's program is written as one)")]
    NotAProgramFile,
    #[error("names no file")]
    NoName,
    #[error("cannot write there: {0}")]
    Unwritable(#[source] std::io::Error),
}

/// Which compiler refused a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compiler {
    /// The host's (the SDK's clang, as the host build runs it).
    Host,
    /// The emulated Q7's code generation, after the device's own compile passed it.
    Device,
}

#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// A program the build runs did not start: a compiler, the linker, objcopy,
    /// pkg-config, the op program.
    #[error("cannot run {program}: {source}")]
    Start {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// A file or folder the build makes, opens, reads, writes or locks.
    #[error("cannot {action} {}: {source}", path.display())]
    File {
        action: FileAction,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// pkg-config does not find one of the SDK's packages.
    #[error("{tool} does not find {package} (install the SDK, or point PKG_CONFIG_PATH at its lib/pkgconfig): {said}")]
    NoPackage {
        tool: String,
        package: String,
        said: String,
    },
    /// The SDK's pkg-config file names no C++ compiler.
    #[error("the SDK's pkg-config file names no C++ compiler (cxx): reinstall the SDK")]
    NoCompiler,
    /// A source a compiler refused: the compiler's words, and what the SDK knows of them.
    #[error("{} does not compile{}:\n{said}{hint}", path.display(), match compiler { Compiler::Host => "", Compiler::Device => " for the device" })]
    Compile {
        compiler: Compiler,
        path: PathBuf,
        said: String,
        hint: String,
    },
    /// Assembly for the device that its assembler refused.
    #[error("{} does not assemble:\n{said}", path.display())]
    Assemble { path: PathBuf, said: String },
    /// An object file the build wrote (or was given) that does not parse.
    #[error("{}: not an object file: {source}", path.display())]
    NotObject {
        path: PathBuf,
        #[source]
        source: object::Error,
    },
    /// The op's program does not link.
    #[error("the op does not link ({linker} ended with {status}):\n{said}")]
    Link {
        linker: String,
        status: std::process::ExitStatus,
        said: String,
    },
    /// The op's program does not describe itself.
    #[error("{} --describe gave no description ({source}): {said}", program.display())]
    Describe {
        program: PathBuf,
        #[source]
        source: serde_json::Error,
        said: String,
    },
    /// objcopy could not rename a compute object's allocations (op_heap.rs).
    #[error("objcopy could not rename the allocations in {} ({status}):\n{said}", path.display())]
    Rename {
        path: PathBuf,
        status: std::process::ExitStatus,
        said: String,
    },
    /// The compiler printed no include search list, so the build's cache cannot know where
    /// it looked (op_deps.rs).
    #[error("{compiler} -E -v printed no include search list: the build's cache cannot know where it looked")]
    NoSearchList { compiler: String },
    /// This process has no working folder to resolve the build's relative paths against.
    #[error("no working folder: {0}")]
    NoWorkingFolder(#[source] std::io::Error),
    /// The device's compile, which a kernel is held to, is not installed.
    #[error("the device's compile, which a kernel is held to, is not installed (--no-device-parity builds without it): {0}")]
    NoDeviceCompile(#[source] Box<OpError>),
    /// A `--translation` object the device's program cannot be linked with.
    #[error("--translation {}: {said}", path.display())]
    Translation { path: PathBuf, said: String },
    /// The kernel's program for the emulated Q7 does not link: the linker's words.
    #[error("the kernel's program for the device does not link:\n{said}")]
    DeviceLink { said: String },
    /// Functions the kernel calls that the device toolchain lacks: each with why.
    #[error("the device toolchain cannot build this kernel; it lacks:\n{}", lacks.iter().map(|(name, why)| format!("  {name}: {why}")).collect::<Vec<_>>().join("\n"))]
    DeviceLacks { lacks: Vec<(String, &'static str)> },
    /// A program `ntx op schema` was given that did not run to its description.
    #[error("{}: cannot run it: {source}", program.display())]
    Unrun {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A program that ran but is not one ntx built.
    #[error("{} is not an op program ntx built", program.display())]
    NotOpProgram { program: PathBuf },
    /// An op program's description that is not JSON.
    #[error("{}: its description does not read: {source}", program.display())]
    DescriptionUnread {
        program: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// `ntx op schema` without its sources or a program.
    #[error("give --compute and --shape, or --library")]
    NoSources,
    /// A path the `--deps` list (a path a line) cannot hold.
    #[error("{}: a path the dependency list cannot hold", path.display())]
    Unlistable { path: PathBuf },
    /// An `--out` that cannot take the op's output or program.
    #[error("--out {}: {problem}", path.display())]
    Out { path: PathBuf, problem: OutProblem },
    /// What the device's build would refuse of the sources (an op's name, a kernel's
    /// declaration, a call, exceptions), in the device's terms.
    #[error("{0}")]
    Device(String),
}

impl OpError {
    /// A failed file operation on `path`.
    pub fn file(
        action: FileAction,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> OpError {
        let path = path.into();
        move |source| OpError::File {
            action,
            path,
            source,
        }
    }

    /// A program, `program`, that did not start.
    pub fn start(program: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> OpError {
        let program = program.to_string();
        move |source| OpError::Start { program, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_reads_as_the_command_says_it() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let cases: [(OpError, &str); 5] = [
            (
                OpError::Compile {
                    compiler: Compiler::Device,
                    path: "k.cpp".into(),
                    said: "k.cpp:1: error\n".into(),
                    hint: String::new(),
                },
                "k.cpp does not compile for the device:\nk.cpp:1: error\n",
            ),
            (
                OpError::file(FileAction::Lock, "b/.ntx-lock")(io()),
                "cannot lock b/.ntx-lock: entity not found",
            ),
            (
                OpError::Out {
                    path: "o".into(),
                    problem: OutProblem::Folder,
                },
                "--out o: is a folder",
            ),
            (
                OpError::Unrun {
                    program: "./p".into(),
                    source: io(),
                },
                "./p: cannot run it: entity not found",
            ),
            (
                OpError::DeviceLacks {
                    lacks: vec![("fopen".into(), "not in the device runtime (sdk/device)")],
                },
                "the device toolchain cannot build this kernel; it lacks:\n  fopen: not in the device runtime (sdk/device)",
            ),
        ];
        for (e, words) in cases {
            assert_eq!(e.to_string(), words);
        }
        let inner = OpError::NoCompiler;
        let outer = OpError::NoDeviceCompile(Box::new(inner));
        assert!(
            std::error::Error::source(&outer).is_some(),
            "the cause kept"
        );
    }
}
