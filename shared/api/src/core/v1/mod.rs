//! core/v1: the core group's resources served here and the types they share.

mod config;
mod event;
mod namespace;
mod service_account;

pub use config::{CONFIG_MAP, CONFIG_MAP_LIST, SECRET, SECRET_LIST};
pub use event::{EVENT, EVENT_LIST, EVENT_SERIES, EVENT_SOURCE};
pub use namespace::{
    NAMESPACE, NAMESPACE_CONDITION, NAMESPACE_LIST, NAMESPACE_SPEC, NAMESPACE_STATUS,
};
pub use service_account::{
    LOCAL_OBJECT_REFERENCE, OBJECT_REFERENCE, SERVICE_ACCOUNT, SERVICE_ACCOUNT_LIST,
};
