//! etcd client errors as [`kas_storage::Error`] (upstream's etcd3/errors.go).

use kas_storage::{Error, encode_continue};

const EXPIRED: &str = "The resourceVersion for the provided list is too old.";
const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";
const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// etcd's "required revision has been compacted".
pub(crate) fn is_compacted(e: &etcd_client::Error) -> bool {
    matches!(e, etcd_client::Error::GRpcStatus(s) if s.message().contains("required revision has been compacted"))
}

/// etcd's "required revision is a future revision".
pub(crate) fn is_future_revision(e: &etcd_client::Error) -> bool {
    matches!(e, etcd_client::Error::GRpcStatus(s) if s.message().contains("required revision is a future revision"))
}

/// Any other failure: unreachable when the transport or the cluster is down, else internal.
pub(crate) fn from_etcd(key: &str, e: etcd_client::Error) -> Error {
    use tonic::Code;
    let unreachable = match &e {
        etcd_client::Error::TransportError(_) | etcd_client::Error::IoError(_) => true,
        etcd_client::Error::GRpcStatus(s) => {
            matches!(
                s.code(),
                Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled
            )
        }
        _ => false,
    };
    if unreachable {
        Error::Unreachable {
            key: key.to_string(),
            source: Box::new(e),
        }
    } else {
        Error::Internal {
            message: format!("etcd request for {key} failed"),
            source: Some(Box::new(e)),
        }
    }
}

/// Upstream's `interpretListError` for a compacted revision.
pub(crate) fn list_compacted(requested: Option<u64>, continue_key: Option<(&str, &str)>) -> Error {
    let Some((continue_key, key_prefix)) = continue_key else {
        return Error::Expired {
            message: EXPIRED.into(),
            requested,
            compacted: None,
            continue_token: None,
        };
    };
    // rv -1: the client may go on at the latest revision, knowing the list is inconsistent.
    match encode_continue(continue_key, key_prefix, -1) {
        Ok(token) => Error::Expired {
            message: INCONSISTENT_CONTINUE.into(),
            requested,
            compacted: None,
            continue_token: Some(token),
        },
        Err(_) => Error::Expired {
            message: CONTINUE_EXPIRED.into(),
            requested,
            compacted: None,
            continue_token: None,
        },
    }
}
