//! Upstream's own round-trip fixtures for the generated tables
//! (`<repo>/pkg/apis/testdata/HEAD/<group>.<version>.<Kind>.{json,pb}`, written by Go from
//! one object): decoding the `.pb` gives the `.json`, and encoding the `.json` gives the
//! `.pb` byte for byte.
//!
//! Ignored by default because the fixtures are not in this repository. Run with
//! `KAS_APIEXTENSIONS_TESTDATA=<k8s.io/apiextensions-apiserver checkout>/pkg/apis/testdata/HEAD
//! cargo test -p kas-api --test upstream -- --ignored`.

use kas_api::Message;
use kas_apimachinery::protobuf::{decode, decode_envelope, encode_object};
use serde_json::Value;

const FIXTURES: [(&str, &Message); 1] = [(
    "apiextensions.k8s.io.v1.CustomResourceDefinition",
    &kas_api::apiextensions::v1::CUSTOM_RESOURCE_DEFINITION,
)];

#[test]
#[ignore = "needs KAS_APIEXTENSIONS_TESTDATA pointing at apiextensions-apiserver's testdata"]
fn apiextensions_round_trip_fixtures() {
    let dir =
        std::env::var("KAS_APIEXTENSIONS_TESTDATA").expect("KAS_APIEXTENSIONS_TESTDATA is not set");
    for (name, msg) in FIXTURES {
        let read = |ext: &str| {
            std::fs::read(format!("{dir}/{name}.{ext}"))
                .unwrap_or_else(|e| panic!("{name}.{ext}: {e}"))
        };
        let json: Value = serde_json::from_slice(&read("json")).expect("fixture JSON");
        let pb = read("pb");

        let unknown = decode_envelope(&pb).expect("envelope");
        let mut decoded = decode(&unknown.raw, msg).unwrap_or_else(|e| panic!("{name}: {e}"));
        decoded["kind"] = Value::from(unknown.kind.clone());
        decoded["apiVersion"] = Value::from(unknown.api_version.clone());
        assert_eq!(decoded, json, "{name}: decoded .pb differs from .json");

        let encoded = encode_object(&json, msg, &unknown.api_version, &unknown.kind)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(encoded, pb, "{name}: encoded .json differs from .pb");
    }
}
