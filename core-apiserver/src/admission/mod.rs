//! kube-apiserver's default admission plugins for the resources core-apiserver serves
//! (`plugin/pkg/admission`), beside the generic `NamespaceLifecycle` of kas-registry.

pub mod default_toleration_seconds;
pub mod priority;
