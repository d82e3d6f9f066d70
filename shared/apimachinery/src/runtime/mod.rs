//! After upstream's `k8s.io/apimachinery/pkg/runtime`: the group, version and kind an object
//! declares (`runtime/schema`), and the serializers that read and write objects as JSON and
//! YAML with upstream's exact errors and layout (`runtime/serializer`). Kubernetes protobuf
//! lives in [`crate::protobuf`], driven by the type tables of [`crate::schema`].

pub mod serializer;

/// Upstream's `schema.GroupVersionKind`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GroupVersionKind {
    pub group: String,
    pub version: String,
    pub kind: String,
}
