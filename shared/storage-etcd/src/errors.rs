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

/// Upstream's etcd client refuses to send a request larger than this
/// (`defaultMaxCallSendMsgSize`, 2 MiB).
pub(crate) const MAX_SEND_MESSAGE_SIZE: usize = 2 * 1024 * 1024;

/// What a write txn carries besides its value: the key in the compare, the put and the
/// `else` read, and protobuf framing. An estimate: it only decides writes within a few
/// dozen bytes of the limit.
const TXN_OVERHEAD: usize = 32;

/// Upstream's client-side refusal of a write whose gRPC message would exceed 2 MiB, in
/// grpc-go's words: the write never reaches etcd.
pub(crate) fn check_send_size(prepared_key: &str, value: &[u8]) -> Result<(), Error> {
    let size = value.len() + 3 * prepared_key.len() + TXN_OVERHEAD;
    if size <= MAX_SEND_MESSAGE_SIZE {
        return Ok(());
    }
    Err(Error::RequestTooLarge {
        message: format!(
            "rpc error: code = ResourceExhausted desc = trying to send message larger than max ({size} vs. {MAX_SEND_MESSAGE_SIZE})"
        ),
    })
}

/// Any other failure: unreachable when the transport or the cluster is down, too large
/// when etcd refused the request's size, else internal.
pub(crate) fn from_etcd(key: &str, e: etcd_client::Error) -> Error {
    use tonic::Code;
    if let etcd_client::Error::GRpcStatus(s) = &e
        && s.code() == Code::InvalidArgument
        && s.message() == "etcdserver: request is too large"
    {
        return Error::RequestTooLarge {
            message: s.message().to_owned(),
        };
    }
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
