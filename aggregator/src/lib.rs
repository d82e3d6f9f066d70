//! The aggregator role's library: upstream's kube-aggregator (`k8s.io/kube-aggregator`)
//! in front of the two other roles. It serves `apiregistration.k8s.io` from etcd
//! (`apiservice`, `apiserver`), proxies the group versions of service-backed APIServices to
//! their servers (`proxy`), serves discovery and OpenAPI merged from every APIService
//! (`documents`: `discovery`, `openapi`), keeps the `kubernetes` Service pointing at its
//! replicas (`kubernetes_service`), and routes what it does not serve to core-apiserver, or straight
//! to extensions-apiserver for the groups it serves (`routing`).
//!
//! It must not depend on the other roles' crates: what it knows of them comes through
//! etcd and their discovery.

pub mod apiserver;
pub mod apiservice;
pub mod backend;
pub mod controllers;
pub mod discovery;
pub mod handler;
pub mod kubernetes_service;
pub mod loopback;
pub mod openapi;
pub mod proxy;
pub mod proxy_cert;
pub mod routing;
pub mod services;
