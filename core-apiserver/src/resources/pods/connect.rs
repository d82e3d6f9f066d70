//! The pods' connect subresources as upstream registers them (`pods/log` a GET with
//! `PodLogOptions`, `pods/exec`, `pods/attach` and `pods/portforward` on GET and POST,
//! `pods/proxy` on every proxy method); `crate::connect` serves them.

use kas_registry::descriptor::{ConnectMethod, ConnectSpec, Subresource, Verb};

const STREAM_METHODS: &[ConnectMethod] = &[ConnectMethod::Get, ConnectMethod::Post];

const fn stream(name: &'static str, kind: &'static str) -> Subresource {
    Subresource::connect(
        name,
        &[Verb::Create, Verb::Get],
        ConnectSpec {
            methods: STREAM_METHODS,
            subpath: false,
            kind,
        },
    )
}

/// `pods/log`: upstream's `LogREST`, a getter whose discovery kind is Pod.
pub const LOG: Subresource = Subresource::connect(
    "log",
    &[Verb::Get],
    ConnectSpec {
        methods: &[ConnectMethod::Get],
        subpath: false,
        kind: "Pod",
    },
);
pub const EXEC: Subresource = stream("exec", "PodExecOptions");
pub const ATTACH: Subresource = stream("attach", "PodAttachOptions");
pub const PORT_FORWARD: Subresource = stream("portforward", "PodPortForwardOptions");
pub const PROXY: Subresource = Subresource::proxy("PodProxyOptions");
