//! `meta.k8s.io` (`k8s.io/apimachinery/pkg/apis/meta`).

pub mod v1;
pub mod v1beta1;
