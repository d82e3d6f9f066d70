//! The `apiserver_flowcontrol_*` metrics.
