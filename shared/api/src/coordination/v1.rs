//! coordination.k8s.io/v1: Lease, used for leader election and node heartbeats.

use crate::meta::v1::{API_VERSION, KIND, OBJECT_METADATA};
use crate::{Field, Kind, Message};

pub static LEASE: Message = Message {
    name: "io.k8s.api.coordination.v1.Lease",
    description: "A lease: who holds it and until when.",
    fields: &[
        KIND,
        API_VERSION,
        OBJECT_METADATA,
        Field::new("spec", 2, Kind::Message(&LEASE_SPEC)).describe("The lease's state."),
    ],
    required: &[],
    atomic: false,
};

pub static LEASE_LIST: Message = list!("io.k8s.api.coordination.v1.LeaseList", LEASE, "leases");

pub static LEASE_SPEC: Message = Message {
    name: "io.k8s.api.coordination.v1.LeaseSpec",
    description: "The holder and timing of a lease.",
    fields: &[
        Field::new("holderIdentity", 1, Kind::String)
            .pointer()
            .describe("Who holds the lease now."),
        Field::new("leaseDurationSeconds", 2, Kind::Int32)
            .pointer()
            .describe("How long candidates wait after the last renewal before taking over."),
        Field::new("acquireTime", 3, Kind::MicroTime)
            .pointer()
            .describe("When the current holder acquired the lease."),
        Field::new("renewTime", 4, Kind::MicroTime)
            .pointer()
            .describe("When the current holder last renewed the lease."),
        Field::new("leaseTransitions", 5, Kind::Int32)
            .pointer()
            .describe("How many times the lease changed holders."),
        Field::new("strategy", 6, Kind::String)
            .pointer()
            .describe("How coordinated leader election picks the holder (alpha, feature-gated)."),
        Field::new("preferredHolder", 7, Kind::String)
            .pointer()
            .describe(
                "Asks the holder to give the lease up to this identity (alpha, needs strategy).",
            ),
    ],
    required: &[],
    atomic: false,
};
