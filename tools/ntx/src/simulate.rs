//! `ntx simulate`: replays a trace of translate calls (written by the host model, or by
//! hand; [`neuron_translate::model::trace`]) through a window table, with the library's own
//! logic, and reports what the hardware would do: hits and refills per slot, register
//! writes, and whether the access pattern thrashes the three reusable windows.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use neuron_translate::layout::{RECORDS, REUSABLE_SLOTS};
use neuron_translate::model::keep::{spanned_bytes, Keeper};
use neuron_translate::model::trace::Event;
use neuron_translate::{RegisterLog, TranslationCtx};
use serde::Serialize;

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Simulation {
    /// Format version of the JSON output.
    pub version: u32,
    /// The trace's source.
    pub trace: String,
    /// The table's description (`original (...)` or its file).
    pub table: String,
    /// Calls replayed.
    pub translates: u64,
    /// Hits by slot.
    pub hits: [u64; RECORDS],
    /// Refills by victim slot.
    pub refills: [u64; RECORDS],
    /// 32-bit register stores (two per refill).
    pub register_writes: u64,
    /// Distinct SoC regions (a window's size, 16 MiB for the reusable ones) refilled.
    pub regions: usize,
    /// Regions refilled more than once: evicted while still in use.
    pub hot_regions: usize,
    /// Refills that brought back a region evicted earlier.
    pub repeat_refills: u64,
    /// More hot regions than reusable windows: the pattern thrashes.
    pub thrash: bool,
    /// The host model's kept views under the same calls (docs/host-model.md): the most
    /// it keeps, how many it kept, how many refills brought one back, how many it keeps
    /// at the end.
    pub keep_limit_views: usize,
    pub views_kept: u64,
    pub views_reused: u64,
    pub kept_views: usize,
    /// The call (0-based) at which the device would trap (a refill with an unusable
    /// register), where the replay stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trapped_at: Option<usize>,
}

/// Replays `events` through `table`, the host model keeping up to `keep_views` views.
pub fn replay(
    table: &mut TranslationCtx,
    events: &[Event],
    trace: &str,
    described: &str,
    keep_views: usize,
) -> Simulation {
    let mut s = Simulation {
        version: 1,
        trace: trace.to_string(),
        table: described.to_string(),
        translates: 0,
        hits: [0; RECORDS],
        refills: [0; RECORDS],
        register_writes: 0,
        regions: 0,
        hot_regions: 0,
        repeat_refills: 0,
        thrash: false,
        keep_limit_views: keep_views,
        views_kept: 0,
        views_reused: 0,
        kept_views: 0,
        trapped_at: None,
    };
    let mut keeper = Keeper::new(keep_views);
    let mut times: BTreeMap<u64, u64> = BTreeMap::new();
    let mut evicted: BTreeSet<u64> = BTreeSet::new();
    for (i, ev) in events.iter().enumerate() {
        let addr = ev.addr();
        let hit = table.find(addr);
        let victim = table.victim();
        let old = table.records[victim];
        let mut log = RegisterLog::default();
        let done = match *ev {
            Event::Translate(a) => table.translate(a, &mut log).map(|_| ()),
            Event::Span(a, n) => table.translate_span(a, n, &mut log).map(|_| ()),
        };
        if done.is_err() {
            s.trapped_at = Some(i);
            break;
        }
        s.translates += 1;
        s.register_writes += 2 * log.0.len() as u64;
        match hit {
            Some(slot) => s.hits[slot] += 1,
            None => {
                let m = keeper.refill(victim, table.records[victim].ptr, s.hits[victim], true);
                s.views_kept += u64::from(m.park.is_some());
                s.views_reused += u64::from(m.reuse);
                s.refills[victim] += 1;
                if !old.is_empty() {
                    evicted.insert(old.ptr);
                }
                let region = table.records[victim].ptr;
                if evicted.remove(&region) {
                    s.repeat_refills += 1;
                }
                *times.entry(region).or_default() += 1;
            }
        }
        if let (Event::Span(a, n), Some(slot)) = (*ev, table.find(addr)) {
            keeper.spanned(slot, spanned_bytes(&table.records[slot], a, n));
        }
    }
    s.kept_views = keeper.kept();
    s.regions = times.len();
    s.hot_regions = times.values().filter(|&&n| n > 1).count();
    s.thrash = s.hot_regions > usize::from(REUSABLE_SLOTS);
    s
}

impl Simulation {
    /// Text for a person.
    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "{}: {} call(s) through {}",
            self.trace, self.translates, self.table
        );
        let row = |v: &[u64; RECORDS]| {
            v.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let _ = writeln!(t, "  hits by slot 0..4:    {}", row(&self.hits));
        let _ = writeln!(t, "  refills by slot 0..4: {}", row(&self.refills));
        let _ = writeln!(t, "  register writes:      {}", self.register_writes);
        let _ = writeln!(
            t,
            "  regions refilled:     {} ({} hot: refilled again after an eviction)",
            self.regions, self.hot_regions
        );
        let _ = writeln!(
            t,
            "  kept views:           {} of {} ({} kept, {} refill(s) brought one back)",
            self.kept_views, self.keep_limit_views, self.views_kept, self.views_reused
        );
        if let Some(i) = self.trapped_at {
            let _ = writeln!(
                t,
                "error: call {i} refills a window whose register is unusable: the device traps there (replay stopped)"
            );
        }
        if self.thrash {
            let _ = writeln!(
                t,
                "warning: thrash: {} hot regions take turns in the {} reusable windows; {} refill(s) brought back a region evicted earlier. Keep at most {} regions hot at a time, or translate once per run with neuron_translate_span.",
                self.hot_regions, REUSABLE_SLOTS, self.repeat_refills, REUSABLE_SLOTS
            );
        }
        t
    }
}
