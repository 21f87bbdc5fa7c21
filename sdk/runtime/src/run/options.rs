//! What a run is asked to do: the op, its arguments as typed, the output file, the cores
//! and the stats, as the runner's command line gives them.

use std::path::PathBuf;

use crate::run::error::{RunError, Usage};

/// How `--stats` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsFormat {
    /// Lines for people.
    Text,
    /// One JSON document (docs/customop-host.md gives its schema).
    Json,
    /// The same document, given back in the call's outcome instead of printed
    /// ([`crate::run::outcome`]).
    Return,
}

/// The command line.
#[derive(Debug, Default)]
pub struct Options {
    /// The op.
    pub op: String,
    /// Its arguments, as typed.
    pub values: Vec<String>,
    /// Where the output goes.
    pub out: Option<PathBuf>,
    /// Cores.
    pub cores: u32,
    /// `--stats`.
    pub stats: Option<StatsFormat>,
    /// `--timeout`: how long the kernels (and the shape function) may run (none: forever).
    pub timeout: Option<std::time::Duration>,
    /// `--sanitize`: the checks that cost a call per element (docs/customop-host.md).
    pub sanitize: bool,
    /// `--device PROGRAM --translation OBJECT`: the kernel runs on the emulated Q7
    /// (docs/customop-device.md).
    pub device: Option<crate::run::device::Program>,
    /// `--profile DIR` (with `--device`): where the counted instructions went, written to
    /// DIR (docs/customop-device.md).
    pub profile: Option<PathBuf>,
    /// Where its reports and its kernels' text go.
    pub output: crate::run::report::Output,
}

impl Options {
    /// The checks every edge's options pass before a call (the runner's command line, the
    /// runner API, the server): an op named, 1 to [`crate::base::limits::MAX_CORES`] cores, `--device` with
    /// `--translation`. Named as the command line names them.
    pub fn validate(&self) -> Result<(), RunError> {
        if self.op.is_empty() {
            return Err(RunError::Usage(Usage::NoOp));
        }
        crate::base::limits::cores_within(self.cores)
            .map_err(|e| RunError::Usage(Usage::Limit(e.to_string())))?;
        let half = |p: &PathBuf| p.as_os_str().is_empty();
        if self
            .device
            .as_ref()
            .is_some_and(|d| half(&d.program) || half(&d.translation))
        {
            return Err(RunError::Usage(Usage::DeviceAlone));
        }
        if self.profile.is_some() && self.device.is_none() {
            return Err(RunError::Usage(Usage::ProfileWithoutDevice));
        }
        Ok(())
    }

    /// When a phase started now must end.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.timeout.map(|t| std::time::Instant::now() + t)
    }
}

/// Why `--name` (no option of the runner's: an argument never starts with `--`) is refused.
fn unknown_option(given: &str) -> RunError {
    RunError::Usage(Usage::Unknown(given.into()))
}

/// The value after `option`, or its refusal (it needs `what`) when there is none.
fn value<'a>(
    it: &mut std::slice::Iter<'a, String>,
    option: &str,
    what: &str,
) -> Result<&'a String, RunError> {
    it.next().ok_or_else(|| {
        RunError::Usage(Usage::NoValue {
            option: option.into(),
            what: what.into(),
        })
    })
}

/// The runner's command line, parsed and [validated](Options::validate).
pub fn parse(args: &[String]) -> Result<Options, RunError> {
    let mut o = Options {
        cores: 1,
        timeout: Some(crate::base::limits::DEFAULT_TIMEOUT),
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => o.out = Some(value(&mut it, "--out", "a file")?.into()),
            "--cores" => {
                let n = value(&mut it, "--cores", "a number")?;
                o.cores = crate::base::limits::cores_of(n)
                    .map_err(|e| RunError::Usage(Usage::Limit(e.to_string())))?;
            }
            "--timeout" => {
                let t = value(&mut it, "--timeout", "seconds")?;
                o.timeout = crate::base::limits::timeout_of(t)
                    .map_err(|e| RunError::Usage(Usage::Limit(e.to_string())))?;
            }
            "--sanitize" => o.sanitize = true,
            "--profile" => o.profile = Some(value(&mut it, "--profile", "a folder")?.into()),
            "--device" => {
                let program = value(&mut it, "--device", "the device program")?;
                let translation = o.device.take().map(|d| d.translation);
                o.device = Some(crate::run::device::Program {
                    program: program.into(),
                    translation: translation.unwrap_or_default(),
                    profile: false,
                });
            }
            "--translation" => {
                let t = value(&mut it, "--translation", "the object")?;
                let d = o.device.get_or_insert(crate::run::device::Program {
                    program: Default::default(),
                    translation: Default::default(),
                    profile: false,
                });
                d.translation = t.into();
            }
            "--stats" => o.stats = Some(StatsFormat::Text),
            "--stats=json" => o.stats = Some(StatsFormat::Json),
            _ if a.starts_with("--") => return Err(unknown_option(a)),
            _ if o.op.is_empty() => o.op = a.clone(),
            _ => o.values.push(a.clone()),
        }
    }
    o.output.kernel_text_to_stderr = o.stats == Some(StatsFormat::Json);
    if let (Some(d), true) = (o.device.as_mut(), o.profile.is_some()) {
        d.profile = true;
    }
    o.validate()?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    fn args(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn values_may_be_negative_and_an_unknown_option_is_refused() {
        let o = super::parse(&args("scale x.npy -2 -inf --cores 2")).unwrap();
        assert_eq!(
            (o.op.as_str(), o.values.as_slice(), o.cores),
            ("scale", &args("x.npy -2 -inf")[..], 2)
        );
        let e = super::parse(&args("relu x.npy --stat")).unwrap_err();
        assert!(
            matches!(&e, super::RunError::Usage(super::Usage::Unknown(m)) if m == "--stat")
                && e.to_string()
                    .starts_with("--stat: not an option of the runner (--out FILE"),
            "{e}"
        );
        assert!(super::parse(&args("relu x.npy --cores 9"))
            .unwrap_err()
            .to_string()
            .contains("from 1 to"));
    }
}
