//! The three roles the launcher runs: their binaries, stop and start order, and delegates.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The three binaries. Ordered as they are stopped: front first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Role {
    #[serde(rename = "aggregator")]
    Aggregator,
    #[serde(rename = "core-apiserver")]
    Core,
    #[serde(rename = "extensions-apiserver")]
    Extensions,
}

impl Role {
    /// Stop order.
    pub const ALL: [Role; 3] = [Role::Aggregator, Role::Core, Role::Extensions];
    /// Start order: a role's delegates first.
    pub const START_ORDER: [Role; 3] = [Role::Extensions, Role::Core, Role::Aggregator];

    pub fn binary_name(self) -> &'static str {
        match self {
            Role::Aggregator => "aggregator",
            Role::Core => "core-apiserver",
            Role::Extensions => "extensions-apiserver",
        }
    }

    /// The role this one forwards to.
    pub fn delegate(self) -> Option<Role> {
        match self {
            Role::Aggregator => Some(Role::Core),
            Role::Core => Some(Role::Extensions),
            Role::Extensions => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.binary_name())
    }
}
