//! How a delegating role tells the role it delegates to that APF already admitted a
//! request, so that it is queued once, where it enters.
//!
//! The entry role puts [`FlowControlled`] in the request's extensions once it admits it;
//! its delegate client then sends [`HANDOFF_HEADER`]. The receiving role's authentication
//! keeps that header only on requests a front proxy authenticated (our own delegating
//! roles), and its APF filter passes such requests without queuing them again. A role
//! reached directly (no header) classifies and queues the request itself.

/// The request header of an admitted request.
pub const HANDOFF_HEADER: &str = "kas-flow-controlled";

/// The extension of a request APF admitted (here or in the role that delegated it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowControlled;
