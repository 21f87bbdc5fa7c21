//! What a session of calls owns: the worker processes kept between its calls (a core's,
//! the shape function's), the shape results it ran clean and the ops whose last call
//! returned a tensor of their own (caches, never a call's result). The server keeps one
//! for its life; the runner's command line and each runner API call make one for the call,
//! and its workers end with it.

use crate::run::shape::Kept;
use crate::run::worker::Workers;

/// A session: see the module's documentation.
#[derive(Default)]
pub struct Session {
    /// Its workers.
    pub workers: Workers,
    /// Its shape results.
    pub shapes: Kept,
    /// The ops whose last call on one core returned a tensor of their own, not
    /// `get_dst_tensor()`'s: their next call skips poisoning the output, which the copy
    /// of what they return overwrites.
    pub returners: Vec<String>,
    /// Each op's kernel's parameter names, once read (None: the debug information has
    /// none).
    names: std::collections::HashMap<String, Option<Vec<String>>>,
}

impl Session {
    /// Op `op`'s kernel's parameter names, in order, if the program's debug information
    /// gives them (read once per op).
    pub fn param_names(&mut self, op: &str) -> Option<Vec<String>> {
        if let Some(n) = self.names.get(op) {
            return n.clone();
        }
        let kernel = crate::percore::registry::with(|r| {
            let o = r.ops.iter().find(|o| o.name == op)?;
            let k = r.kernels_of(o).first().copied()?;
            Some((k.function as usize, k.params.len()))
        });
        let names = kernel.and_then(|k| {
            crate::run::param_names::of_functions(&[k])
                .into_iter()
                .next()
                .flatten()
        });
        self.names.insert(op.to_string(), names.clone());
        names
    }
}
