//! SPDY/3.1 as Kubernetes streams speak it (`k8s.io/apimachinery/pkg/util/httpstream/spdy`
//! over moby/spdystream): the frames and their compressed header blocks ([`frame`]), and a
//! connection of streams over an upgraded connection ([`conn`]). kubelets serve exec,
//! attach and port-forward in it; the API server speaks it to them when it translates a
//! client's WebSocket streams.

pub mod conn;
pub mod frame;

pub use conn::{Connection, Role, Stream, StreamWriter};
pub use frame::{Codec, Frame, FrameError, Headers, header};

/// `Upgrade: SPDY/3.1`.
pub const PROTOCOL: &str = "SPDY/3.1";
/// The header naming the stream protocol versions (`v4.channel.k8s.io`, ...).
pub const STREAM_PROTOCOL_VERSION: &str = "X-Stream-Protocol-Version";
