//! Upstream's own round-trip fixtures (`k8s.io/api/testdata/HEAD/<group>.<version>.<Kind>.
//! {json,pb}`, written by Go from one object): decoding the `.pb` must give the `.json`,
//! and encoding the `.json` must give the `.pb` byte for byte.
//!
//! Ignored by default because the fixtures are not in this repository. Run with
//! `KAS_K8S_API_TESTDATA=<k8s.io/api checkout>/testdata/HEAD cargo test -p
//! kas-apimachinery protobuf -- --ignored`.

use serde_json::Value;

use super::schemas::{CONFIG_MAP, EVENT, LEASE, PDB, RESOURCE_QUOTA, SECRET};
use crate::protobuf::{decode, decode_envelope, encode_object};
use crate::schema::Message;

const FIXTURES: [(&str, &Message); 6] = [
    ("core.v1.ConfigMap", &CONFIG_MAP),
    ("core.v1.Secret", &SECRET),
    ("core.v1.Event", &EVENT),
    ("core.v1.ResourceQuota", &RESOURCE_QUOTA),
    ("coordination.k8s.io.v1.Lease", &LEASE),
    ("policy.v1.PodDisruptionBudget", &PDB),
];

#[test]
#[ignore = "needs KAS_K8S_API_TESTDATA pointing at k8s.io/api's testdata/HEAD"]
fn upstream_round_trip_fixtures() {
    let dir = std::env::var("KAS_K8S_API_TESTDATA").expect("KAS_K8S_API_TESTDATA is not set");
    for (name, msg) in FIXTURES {
        let read = |ext: &str| {
            std::fs::read(format!("{dir}/{name}.{ext}"))
                .unwrap_or_else(|e| panic!("{name}.{ext}: {e}"))
        };
        let json: Value = serde_json::from_slice(&read("json")).unwrap();
        let pb = read("pb");

        let unknown = decode_envelope(&pb).unwrap();
        assert_eq!(json["apiVersion"], unknown.api_version.as_str(), "{name}");
        assert_eq!(json["kind"], unknown.kind.as_str(), "{name}");
        let mut decoded = decode(&unknown.raw, msg).unwrap_or_else(|e| panic!("{name}: {e}"));
        decoded["kind"] = Value::from(unknown.kind.clone());
        decoded["apiVersion"] = Value::from(unknown.api_version.clone());
        assert_eq!(decoded, json, "{name}: decoded .pb differs from .json");

        let encoded = encode_object(&json, msg, &unknown.api_version, &unknown.kind)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(encoded, pb, "{name}: encoded .json differs from .pb");
    }
}
