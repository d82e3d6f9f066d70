//! kas-proto: the project's own gRPC services between roles, generated from `proto/*.proto`
//! with tonic and prost.
//!
//! Transport-free: each role carries these calls over its own mTLS HTTP/2 connections.

#[allow(clippy::all, missing_docs)]
pub mod peer {
    pub mod v1 {
        tonic::include_proto!("kas.peer.v1");
    }
}
