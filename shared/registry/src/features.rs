//! Upstream's feature gates that change how this registry serves requests, with 1.33's
//! defaults, parsed from `--feature-gates` (`Name=true,Other=false`). They travel in the
//! registry's configuration (`ApiGroups::with_features`), never as globals.

use std::fmt;

use kas_apimachinery::golang::strconv::parse_bool;

/// The gates this server knows; `Default` is 1.33's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    /// `WatchList`: watches may ask for `sendInitialEvents` (streaming lists). Beta and off
    /// by default in 1.33 (on in 1.32; upstream turned it back off).
    pub watch_list: bool,
    /// `TranslateStreamCloseWebsocketRequests`: exec and attach over WebSocket
    /// `v5.channel.k8s.io` are translated to SPDY toward the kubelet. Beta, on in 1.33.
    pub translate_stream_close_websocket_requests: bool,
    /// `PortForwardWebsockets`: port-forward over WebSocket tunnels SPDY to the kubelet.
    /// Beta, on in 1.33.
    pub port_forward_websockets: bool,
}

impl FeatureGates {
    /// 1.33's defaults, for constants (`FeatureGates { watch_list: true, ..DEFAULTS }`).
    pub const DEFAULTS: FeatureGates = FeatureGates {
        watch_list: false,
        translate_stream_close_websocket_requests: true,
        port_forward_websockets: true,
    };
}

impl Default for FeatureGates {
    fn default() -> Self {
        FeatureGates::DEFAULTS
    }
}

/// A `--feature-gates` value upstream would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl FeatureGates {
    /// Upstream's `featureGate.Set`: comma-separated `Name=bool` pairs over the defaults;
    /// an unknown name or a value that is not a Go bool is an error with upstream's text.
    pub fn parse(value: &str) -> Result<FeatureGates, Error> {
        let mut gates = FeatureGates::default();
        for pair in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, v)) = pair.split_once('=') else {
                return Err(Error(format!("missing bool value for {pair}")));
            };
            let (name, v) = (name.trim(), v.trim());
            let enabled = parse_bool(v)
                .map_err(|e| Error(format!("invalid value of {name}={v}, err: {e}")))?;
            match name {
                "WatchList" => gates.watch_list = enabled,
                "TranslateStreamCloseWebsocketRequests" => {
                    gates.translate_stream_close_websocket_requests = enabled
                }
                "PortForwardWebsockets" => gates.port_forward_websockets = enabled,
                _ => return Err(Error(format!("unrecognized feature gate: {name}"))),
            }
        }
        Ok(gates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_1_33s_and_flags_override_them() {
        assert!(!FeatureGates::default().watch_list);
        assert!(FeatureGates::default().translate_stream_close_websocket_requests);
        assert!(FeatureGates::default().port_forward_websockets);
        let off = FeatureGates::parse(
            "TranslateStreamCloseWebsocketRequests=false,PortForwardWebsockets=false",
        )
        .unwrap();
        assert!(!off.translate_stream_close_websocket_requests && !off.port_forward_websockets);
        assert!(FeatureGates::parse("WatchList=true").unwrap().watch_list);
        assert!(
            !FeatureGates::parse("WatchList=true, WatchList=false")
                .unwrap()
                .watch_list
        );
        assert_eq!(FeatureGates::parse("").unwrap(), FeatureGates::default());
        assert_eq!(
            FeatureGates::parse("Nope=true").unwrap_err().to_string(),
            "unrecognized feature gate: Nope"
        );
        assert_eq!(
            FeatureGates::parse("WatchList").unwrap_err().to_string(),
            "missing bool value for WatchList"
        );
        assert!(FeatureGates::parse("WatchList=yes").is_err());
    }
}
