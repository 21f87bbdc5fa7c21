//! A call checked and run: the runner's program and its calls ([`call`]), the shape
//! function ([`shape`]), each core in a process of its own ([`cores`], [`child`],
//! [`worker`]) or its kernel on the emulated Q7 ([`device`]), the checks across cores
//! ([`checks`]), what is reported and printed ([`report`], [`stats`]), the output file
//! ([`outfile`]), and the kernels' parameter names from the program's debug information
//! ([`param_names`]). Uses [`crate::base`] and [`crate::percore`].

pub(crate) mod call;
pub(crate) mod checks;
pub(crate) mod child;
pub(crate) mod cores;
pub(crate) mod device;
pub(crate) mod error;
pub(crate) mod frames;
pub(crate) mod group;
pub(crate) mod options;
pub(crate) mod outcome;
pub(crate) mod outfile;
pub(crate) mod param_names;
pub(crate) mod place;
pub(crate) mod profile;
pub(crate) mod report;
pub(crate) mod schema;
pub(crate) mod session;
pub(crate) mod shape;
pub(crate) mod stats;
pub(crate) mod worker;

pub use call::{call, main, shape_of};
pub use session::Session;
