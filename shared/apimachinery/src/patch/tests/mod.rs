//! Cases rewritten from upstream's strategicpatch `patch_test.go`, evanphx/json-patch's
//! `patch_test.go` and `merge_test.go`, and the apiserver's PATCH handler.

mod json_patch;
mod merge_patch;
mod strategic;
mod strategic_order;

use serde_json::Value;

use super::{SchemaTable, builtin_schema};

fn pod() -> &'static SchemaTable {
    builtin_schema("", "v1", "Pod").expect("pod schema")
}

fn smp(original: Value, patch: Value) -> Value {
    super::strategic_merge_patch(&original, &patch, pod()).expect("patch applies")
}

fn smp_err(original: Value, patch: Value) -> super::PatchError {
    super::strategic_merge_patch(&original, &patch, pod()).expect_err("patch fails")
}
