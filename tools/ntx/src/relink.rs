//! `ntx relink`: the candidate object put in place of a member of the vendor's archive,
//! after the same diff `ntx abi-diff` makes, with the other members' imports checked.

use std::path::Path;

use ntx::diff::Report;
use ntx::error::{Error, ErrorKind};
use ntx::{archive, diff, load_bytes};

use super::{pretty, read, Failure, Format, Policy};

/// What `ntx relink` was asked to do.
pub struct Relink<'a> {
    pub vendor: &'a Path,
    pub object: &'a Path,
    pub out: &'a Path,
    pub member: &'a str,
    pub force: bool,
}

/// `ntx relink`: the candidate diffed against the member it replaces (the other members'
/// imports checked) and, unless refused, the archive written with it in that member's place.
pub fn relink(job: &Relink, format: Format, policy: &Policy) -> Result<u8, Failure> {
    let (report, members, index) = relink_report(job, policy)?;
    let refused = (!report.compatible() && !job.force).then(|| {
        format!(
            "refusing to relink: {} break(s) against {}({}); --force to relink anyway",
            report.breaks,
            job.vendor.display(),
            job.member
        )
    });
    let written = match &refused {
        Some(_) => None,
        None => Some(write_relinked(job, members, index)?),
    };
    match format {
        Format::Text => {
            print!("{}", report.to_text());
            if let Some(n) = written {
                println!(
                    "wrote {} ({n} members, {} replaced)",
                    job.out.display(),
                    job.member
                );
            }
        }
        Format::Json => println!(
            "{}",
            pretty(&serde_json::json!({
                "version": 1,
                "report": report,
                "relink": {
                    "archive": job.vendor.display().to_string(),
                    "object": job.object.display().to_string(),
                    "member": job.member,
                    "out": job.out.display().to_string(),
                    "forced": job.force && !report.compatible(),
                    "written": written.is_some(),
                    "members": written,
                    "refused": refused,
                },
            }))
        ),
    }
    if let Some(m) = refused {
        return Err(Failure::Refused(m));
    }
    Ok(if report.compatible() { 0 } else { 1 })
}

/// The diff of the object against the member it replaces, with the other members'
/// imports checked; the archive's members and the index of the one to replace.
fn relink_report(
    job: &Relink,
    policy: &Policy,
) -> Result<(Report, Vec<archive::Member>, usize), Failure> {
    let vsrc = job.vendor.display().to_string();
    if same_file(job.vendor, job.out) {
        return Err(Error::new(
            ErrorKind::BadArgument,
            job.out.display().to_string(),
            "--out is the vendor archive itself; it is never overwritten",
        )
        .into());
    }
    let vdata = read(job.vendor)?;
    let members = archive::read_members(&vdata, &vsrc)?;
    let index = members
        .iter()
        .position(|m| m.name == job.member.as_bytes())
        .ok_or_else(|| archive::member(&members, job.member, &vsrc).unwrap_err())?;
    let odata = read(job.object)?;
    let osrc = job.object.display().to_string();
    let reference = load_bytes(
        &members[index].data,
        &format!("{vsrc}({})", job.member),
        job.member,
    )?;
    let candidate = ntx::model::from_elf(&odata, &osrc)?;
    diff::comparable(&reference, &candidate)?;
    let mut report = diff::diff(&reference, &candidate);
    // The other members, as the linker will see them: what they import from the member
    // being replaced must still be there. Members that are not ELF objects are skipped.
    let others: Vec<(String, ntx::model::AbiModel)> = members
        .iter()
        .enumerate()
        .filter(|(i, m)| *i != index && m.data.starts_with(b"\x7fELF"))
        .map(|(_, m)| {
            let name = String::from_utf8_lossy(&m.name).into_owned();
            let model = ntx::model::from_elf(&m.data, &format!("{vsrc}({name})"))?;
            Ok((name, model))
        })
        .collect::<Result<_, Error>>()?;
    report.extend(diff::unresolved_consumers(&others, &reference, &candidate));
    policy.apply(&mut report)?;
    let mut members = members;
    members[index].data = odata;
    Ok((report, members, index))
}

/// Writes the archive with `members[index]` (already holding the new object) stamped as
/// a fresh member; returns the number of members.
fn write_relinked(
    job: &Relink,
    mut members: Vec<archive::Member>,
    index: usize,
) -> Result<usize, Error> {
    members[index].date = 0;
    members[index].uid = 0;
    members[index].gid = 0;
    members[index].mode = 0o644;
    let bytes = archive::write_gnu(&members);
    // Write next to the destination, then rename: a failed write leaves nothing half-done.
    let tmp = job.out.with_extension("ntx-tmp");
    let osrc_out = job.out.display().to_string();
    std::fs::write(&tmp, &bytes)
        .map_err(|e| Error::new(ErrorKind::Write, &osrc_out, format!("cannot write: {e}")))?;
    std::fs::rename(&tmp, job.out).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::new(ErrorKind::Write, &osrc_out, format!("cannot write: {e}"))
    })?;
    Ok(members.len())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
