//! Findings repeated across cores, reported once: the same finding on several cores (an
//! accessor each core opens under several cores, say) becomes one report naming the
//! cores. Each core's own copy stays in its `per_core` reports of `--stats=json`.

use crate::base::misuse::Report;

/// `reports` with each finding several cores made alike (the same kind, tensor, index
/// and words, each on one core) given once, in the order of its first.
pub fn grouped(reports: Vec<Report>) -> Vec<Report> {
    let mut out: Vec<Report> = Vec::new();
    for r in reports {
        let same = out.iter_mut().find(|g| {
            r.core.is_some()
                && (g.core.is_some() || !g.cores.is_empty())
                && g.kind == r.kind
                && g.tensor == r.tensor
                && g.index == r.index
                && g.detail == r.detail
        });
        match (same, r.core) {
            (Some(g), Some(c)) => {
                if let Some(first) = g.core.take() {
                    g.cores.push(first);
                }
                g.cores.push(c);
                g.cores.sort_unstable();
                g.cores.dedup();
            }
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::grouped;
    use crate::base::misuse::{Kind, Report};

    #[test]
    fn a_finding_every_core_made_is_one_line_naming_the_cores() {
        let on = |core, detail: &str| {
            Report::of_run("op", Kind::AccessorMulticore, Some(core), detail.into())
        };
        let same = "a standard accessor under 8 cores";
        let mut all: Vec<_> = (0..8).map(|c| on(c, same)).collect();
        all.push(on(3, "another finding"));
        let g = grouped(all);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].core, None);
        assert_eq!(g[0].cores, (0..8).collect::<Vec<u32>>());
        assert_eq!(
            g[0].line(),
            "error[accessor-multicore] op op, cores 0 to 7: a standard accessor under 8 cores"
        );
        assert_eq!(
            g[1].line(),
            "error[accessor-multicore] op op, core 3: another finding"
        );
        let two = grouped(vec![on(0, same), on(5, same)]);
        assert_eq!(
            two[0].line(),
            "error[accessor-multicore] op op, cores 0 and 5: a standard accessor under 8 cores"
        );
    }
}
