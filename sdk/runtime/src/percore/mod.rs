//! One core's state: what one process holds and does. Its tensors in HBM ([`tensors`]),
//! the runtime behind one lock ([`state`]), the operations ([`ops`]), the accessors'
//! checks ([`access`]) and the ops the program registered ([`registry`]). Uses
//! [`crate::base`] only.

pub mod access;
pub mod c_heap;
pub(crate) mod decode;
pub(crate) mod error;
pub mod hbm;
pub mod heap;
pub mod ops;
pub(crate) mod registry;
pub mod state;
pub(crate) mod tensors;
