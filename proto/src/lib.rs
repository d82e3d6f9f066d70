//! kas-proto: the project's own gRPC services between roles, generated from `proto/*.proto`
//! with tonic and prost, and the KMS v2 plugin API with its envelope (`proto/kms/v2`).
//!
//! Transport-free: each role carries these calls over its own mTLS HTTP/2 connections.

#[allow(clippy::all, missing_docs)]
pub mod peer {
    pub mod v1 {
        tonic::include_proto!("kas.peer.v1");
    }
}

/// The KMS v2 plugin API (`v2.KeyManagementService`) and the `EncryptedObject` envelope
/// kube-apiserver stores.
#[allow(clippy::all, missing_docs)]
pub mod kms {
    pub mod v2 {
        tonic::include_proto!("v2");
    }
}
