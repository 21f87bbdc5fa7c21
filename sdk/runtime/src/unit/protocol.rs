//! The device protocol's requests as they arrive ([`crate::run::device::answer`]): a code
//! the protocol does not have, or a payload shorter or longer than its fields, ends the run
//! with the reason and changes nothing.

use super::{runtime, tensor};
use crate::run::device::answer::{answer, DeviceRequest, ProgramRun};
use crate::run::error::{RunError, Unanswered};

#[test]
fn an_unknown_code_or_a_short_payload_is_refused_before_anything_changes() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[4], 0x1000);
    let refs = rt.entry(h).refs;
    let (mut ran, mut out) = (ProgramRun::default(), Vec::new());
    let none = DeviceRequest::ALL.iter().map(|r| r.code()).max().unwrap() + 1;
    let unknown = answer(&mut rt, none, &[], &mut ran, &mut out);
    assert_eq!(
        unknown,
        Err(RunError::Unanswered(Unanswered::UnknownCode(none)))
    );
    let short = answer(
        &mut rt,
        DeviceRequest::Retain as u32,
        &[1, 0],
        &mut ran,
        &mut out,
    );
    assert!(
        short.as_ref().is_err_and(|m| m
            .to_string()
            .contains("Retain request whose payload ends 2 bytes short")),
        "{short:?}"
    );
    let policy = answer(
        &mut rt,
        DeviceRequest::Policy as u32,
        &h.to_le_bytes(),
        &mut ran,
        &mut out,
    );
    assert!(policy.is_err(), "a POLICY without its set: {policy:?}");
    let mut long = h.to_le_bytes().to_vec();
    long.push(0);
    let long = answer(
        &mut rt,
        DeviceRequest::Retain as u32,
        &long,
        &mut ran,
        &mut out,
    );
    assert!(
        long.as_ref().is_err_and(|m| m
            .to_string()
            .contains("Retain request whose payload has 1 bytes past its fields")),
        "{long:?}"
    );
    assert_eq!(rt.entry(h).refs, refs, "nothing retained");
    assert!(out.is_empty() && rt.job.reports.is_empty());
    let whole = answer(
        &mut rt,
        DeviceRequest::Retain as u32,
        &h.to_le_bytes(),
        &mut ran,
        &mut out,
    );
    assert_eq!(whole, Ok(true));
    assert_eq!(rt.entry(h).refs, refs + 1);
}

#[test]
fn the_device_runtimes_own_exits_are_named_in_words() {
    use crate::base::codes::DeviceExit;
    assert_eq!(
        DeviceExit::from_code(73).map(DeviceExit::words).as_deref(),
        Some("A tensor handle past the runtime's 4,096 tensors.")
    );
    assert!(DeviceExit::ALL
        .iter()
        .all(|e| !e.words().is_empty() && !e.words().contains('\n')));
    assert_eq!(DeviceExit::from_code(0), None);
}
