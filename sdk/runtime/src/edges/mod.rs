//! Where calls come in: the C ABI the headers call ([`ffi`], [`ffi_access`], [`ffi_heap`]: each converts
//! a call and forwards it below), the runner API's C ABI ([`api`]) and the server the
//! Python front end talks to ([`serve`]). Uses every folder below; nothing uses it.

pub(crate) mod api;
pub(crate) mod contain;
pub(crate) mod error;
pub mod ffi;
pub(crate) mod ffi_access;
pub(crate) mod ffi_heap;
pub(crate) mod serve;
pub(crate) mod ubsan;
